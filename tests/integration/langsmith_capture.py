"""A tiny local stand-in for the LangSmith API that records the runs a client sends.

It answers what the langsmith 0.15 client calls while tracing:

- ``GET /info`` (asked first): a minimal JSON; ``instance_flags.zstd_compression_enabled`` is
  false unless the capture is made with ``zstd=True``, so by default the client sends plain
  multipart (also set ``LANGSMITH_DISABLE_RUN_COMPRESSION=true`` to silence its warning).
- ``POST /runs/multipart``: multipart/form-data with parts ``post.<id>`` / ``patch.<id>`` (the run
  minus its large fields) and ``post.<id>.inputs`` / ``.outputs`` / ``.extra`` / ``.events`` /
  ``.error`` / ``.serialized`` sub-parts; ``attachment.<id>.<name>`` and ``feedback.<id>`` parts
  are recorded as they are. Bodies compressed with ``Content-Encoding: gzip`` or ``zstd`` are
  decompressed first.
- ``POST /runs/batch`` (``{"post": [...], "patch": [...]}``), ``POST /runs`` and
  ``PATCH /runs/<id>``: the older JSON endpoints.

Every run is merged into one dict per run id (a ``patch`` updates what its ``post`` created), so a
test can read ``capture.runs`` after the client has flushed.
"""

from __future__ import annotations

import gzip
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from requests_toolbelt.multipart.decoder import MultipartDecoder

INFO = {
    "version": "0.0.0-capture",
    "license_expiration_time": None,
    "batch_ingest_config": {
        "use_multipart_endpoint": True,
        "scale_up_qsize_trigger": 1000,
        "scale_up_nthreads_limit": 16,
        "scale_down_nempty_trigger": 4,
        "size_limit": 100,
        "size_limit_bytes": 20_971_520,
    },
    "instance_flags": {},
}
"""The minimal ``GET /info`` answer (``instance_flags`` is set per capture)."""

RUN_FIELDS = ("inputs", "outputs", "events", "extra", "error", "serialized")


class LangSmithCapture:
    """A threaded HTTP server on ``127.0.0.1:<free port>`` that stores every run it is sent."""

    def __init__(self, *, zstd: bool = False) -> None:
        self.info = {**INFO, "instance_flags": {"zstd_compression_enabled": zstd}}
        """What ``GET /info`` answers; ``zstd=True`` invites zstd-compressed multipart bodies."""
        self.runs: dict[str, dict[str, Any]] = {}
        """Run id -> the run, with every post and patch merged in arrival order."""
        self.requests: list[tuple[str, str, str]] = []
        """``(method, path, content encoding)`` of every request, for diagnostics."""
        self.errors: list[str] = []
        """Requests the capture could not understand (a test should assert this is empty)."""
        self.other_parts: list[tuple[str, bytes]] = []
        """Multipart parts that are not run fields (attachments, feedback)."""
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The endpoint to put in ``LANGSMITH_ENDPOINT``."""
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> LangSmithCapture:
        """Serve in a background thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def __enter__(self) -> LangSmithCapture:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def snapshot(self) -> dict[str, dict[str, Any]]:
        """A copy of the runs received so far."""
        with self._lock:
            return {run_id: dict(run) for run_id, run in self.runs.items()}

    def runs_named(self, name: str) -> list[dict[str, Any]]:
        """Every received run called ``name``."""
        return [run for run in self.snapshot().values() if run.get("name") == name]

    # -- recording ---------------------------------------------------------------------------

    def _merge(self, run_id: str, fields: dict[str, Any]) -> None:
        with self._lock:
            run = self.runs.setdefault(run_id, {"id": run_id})
            run.update(fields)

    def _record_run_dict(self, operation: str, payload: dict[str, Any]) -> None:
        run_id = str(payload.get("id") or "")
        if not run_id:
            self.errors.append(f"{operation} without an id: {sorted(payload)}")
            return
        self._merge(run_id, payload)

    def _record_multipart(self, body: bytes, content_type: str) -> None:
        for part in MultipartDecoder(body, content_type).parts:
            disposition = part.headers.get(b"Content-Disposition", b"").decode()
            name = _form_field_name(disposition)
            if name is None:
                self.errors.append(f"multipart part without a name: {disposition!r}")
                continue
            kind, _, rest = name.partition(".")
            if kind not in ("post", "patch"):
                self.other_parts.append((name, part.content))
                continue
            run_id, _, field = rest.partition(".")
            value = json.loads(part.content) if part.content else None
            if not field:
                if not isinstance(value, dict):
                    self.errors.append(f"part {name} is not a JSON object")
                    continue
                self._merge(run_id, value)
            elif field in RUN_FIELDS:
                self._merge(run_id, {field: value})
            else:
                self.other_parts.append((name, part.content))

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        capture = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                """Quiet: the test reads ``capture.requests`` instead."""

            def _body(self) -> bytes:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                encoding = (self.headers.get("Content-Encoding") or "").lower()
                if encoding == "gzip":
                    return gzip.decompress(raw)
                if encoding == "zstd":
                    import zstandard

                    return zstandard.ZstdDecompressor().decompressobj().decompress(raw)
                return raw

            def _reply(self, status: int, payload: Any) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _handle(self, method: str) -> None:
                path = self.path.split("?", 1)[0].rstrip("/")
                encoding = (self.headers.get("Content-Encoding") or "").lower()
                capture.requests.append((method, path, encoding))
                try:
                    body = self._body() if method in ("POST", "PATCH", "PUT") else b""
                    if method == "GET" and path.endswith("/info"):
                        self._reply(200, capture.info)
                        return
                    if method == "POST" and path.endswith("/runs/multipart"):
                        content_type = self.headers.get("Content-Type", "")
                        capture._record_multipart(body, content_type)
                        self._reply(202, {})
                        return
                    if method == "POST" and path.endswith("/runs/batch"):
                        batch = json.loads(body)
                        for operation in ("post", "patch"):
                            for run in batch.get(operation) or []:
                                capture._record_run_dict(operation, run)
                        self._reply(202, {})
                        return
                    if method == "POST" and path.endswith("/runs"):
                        capture._record_run_dict("post", json.loads(body))
                        self._reply(202, {})
                        return
                    if method == "PATCH" and "/runs/" in path:
                        run_id = path.rsplit("/", 1)[-1]
                        capture._record_run_dict("patch", {**json.loads(body), "id": run_id})
                        self._reply(202, {})
                        return
                    self._reply(200, {})
                except Exception as error:  # noqa: BLE001 - recorded for the test to assert on
                    capture.errors.append(f"{method} {path}: {type(error).__name__}: {error}")
                    self._reply(500, {"detail": str(error)})

            def do_GET(self) -> None:  # noqa: N802
                self._handle("GET")

            def do_POST(self) -> None:  # noqa: N802
                self._handle("POST")

            def do_PATCH(self) -> None:  # noqa: N802
                self._handle("PATCH")

            def do_PUT(self) -> None:  # noqa: N802
                self._handle("PUT")

        return Handler


def _form_field_name(disposition: str) -> str | None:
    """The ``name="..."`` of a ``Content-Disposition: form-data`` header."""
    for item in disposition.split(";"):
        key, _, value = item.strip().partition("=")
        if key == "name":
            return value.strip('"')
    return None
