"""An API key never leaks: canary keys through real runs, their files, logs, traces and errors.

``OPENAI_API_KEY`` and ``LANGSMITH_API_KEY`` hold random canaries while ``todeval evaluate``
and ``todeval goal-success`` run with LLM judges (SmolLM2 on the local llama.cpp server), with
Python logging at DEBUG on stderr and LangSmith tracing on. Every byte the runs leave behind is
searched for the canaries (whole, their random part, its first and last 10 characters):
results, summaries, reports, the checkpoint and LLM cache SQLite files, stdout and stderr, and
the bodies of the traces a local stand-in for LangSmith receives (the LangSmith key belongs in
its ``x-api-key`` header, nowhere else). A second run traces to a closed port, so the LangSmith
client logs its failures. A provider that echoes the key it was sent (as OpenAI's own 401
answer does, there masked) gives a null label's reason, the circuit breaker's note and a failed
record's error; each must carry a placeholder instead.

The runs are fresh processes: langsmith caches its env lookups and its client per process.
"""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import REPO_ROOT, free_port, make_dialogue, subprocess_env
from tests.integration.langsmith_capture import INFO
from todeval.nodes.judges.redact import PLACEHOLDER, error_text, redact
from todeval.nodes.judges.spec import JudgeSpecError, parse_spec

pytestmark = pytest.mark.integration

RUN_TIMEOUT_S = 600

#: Runs ``todeval`` once per argv list (argv[1], JSON) in one process, logging at DEBUG. The
#: Appendix D answer is capped at 64 tokens (768 take a minute here): these runs test where keys
#: go, not what the model says.
RUN_CLI = """
import json, logging, sys
logging.basicConfig(level=logging.DEBUG, stream=sys.stderr,
                    format="%(levelname)s %(name)s: %(message)s")
import todeval.nodes.goal_success.judges.appendix_d as appendix_d
appendix_d.MAX_OUTPUT_TOKENS = 64
from todeval.cli.main import main
codes = [main(argv) for argv in json.loads(sys.argv[1])]
from langchain_core.tracers.langchain import wait_for_all_tracers
wait_for_all_tracers()
print("exit codes:", json.dumps(codes))
"""


@dataclass(frozen=True)
class Canaries:
    """The two canary keys of a test run."""

    openai: str
    langsmith: str

    @classmethod
    def fresh(cls) -> Canaries:
        """New random keys shaped like the real ones."""
        return cls(f"sk-canary-{secrets.token_hex(12)}", f"lsv2-canary-{secrets.token_hex(12)}")

    def needles(self) -> list[bytes]:
        """What must appear nowhere: each key, its random part, and that part's two ends."""
        found = []
        for key in (self.openai, self.langsmith):
            random_part = key.rsplit("-", 1)[1]
            found += [key, random_part, random_part[:10], random_part[-10:]]
        return [needle.encode() for needle in found]

    def leaks(self, data: bytes) -> list[str]:
        """The needles ``data`` contains."""
        return [needle.decode() for needle in self.needles() if needle in data]


def leaking_files(root: Path, canaries: Canaries) -> dict[str, list[str]]:
    """Every file under ``root`` holding a canary -> what it holds."""
    found = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and (leaks := canaries.leaks(path.read_bytes())):
            found[str(path.relative_to(root))] = leaks
    return found


# -- local servers ------------------------------------------------------------------------------


class _Server:
    """A threaded HTTP server on 127.0.0.1 with the given handler class."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def _reply(handler: BaseHTTPRequestHandler, status: int, payload: Any, **headers: str) -> None:
    data = json.dumps(payload).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    for name, value in headers.items():
        handler.send_header(name.replace("_", "-"), value)
    handler.end_headers()
    handler.wfile.write(data)


def _body(handler: BaseHTTPRequestHandler) -> bytes:
    length = int(handler.headers.get("Content-Length") or 0)
    return handler.rfile.read(length) if length else b""


class TraceCapture(_Server):
    """A LangSmith stand-in that keeps every request's headers and raw body."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, str], bytes]] = []
        capture = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                """Quiet."""

            def _handle(self) -> None:
                capture.requests.append((self.path, dict(self.headers), _body(self)))
                if self.path.rstrip("/").endswith("/info"):
                    _reply(self, 200, INFO)  # no zstd: with LANGSMITH_DISABLE_RUN_COMPRESSION
                else:
                    _reply(self, 202, {})

            do_GET = do_POST = do_PATCH = do_PUT = _handle

        super().__init__(Handler)

    @property
    def bodies(self) -> bytes:
        """Every request body, joined."""
        return b"\n".join(body for _, _, body in self.requests)


class EchoingProvider(_Server):
    """An OpenAI-compatible endpoint that fails every call, echoing the key it was sent.

    The model name picks the status: ``status-401`` or ``status-500``.
    """

    def __init__(self) -> None:
        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                """Quiet."""

            def do_POST(self) -> None:  # noqa: N802
                model = str(json.loads(_body(self) or b"{}").get("model", ""))
                status = 401 if model == "status-401" else 500
                key = self.headers.get("Authorization", "").removeprefix("Bearer ")
                error = {"message": f"Incorrect API key provided: {key}", "type": "invalid"}
                _reply(self, status, {"error": error}, Retry_After="0")

        super().__init__(Handler)


# -- the runs -----------------------------------------------------------------------------------


@dataclass
class Run:
    """One ``RUN_CLI`` process: its folder, exit codes, stdout and stderr."""

    root: Path
    codes: list[int]
    stdout: str
    stderr: str


def _corpus(path: Path, *ids: str) -> Path:
    path.write_text("".join(json.dumps(make_dialogue(i, [n])) + "\n" for n, i in enumerate(ids)))
    return path


def _start(root: Path, argvs: list[list[str]], env: dict[str, str]) -> subprocess.Popen[str]:
    with (root / "stdout.txt").open("w") as out, (root / "stderr.txt").open("w") as err:
        return subprocess.Popen(
            [sys.executable, "-c", RUN_CLI, json.dumps(argvs)],
            cwd=REPO_ROOT,
            env=env,
            stdout=out,
            stderr=err,
            text=True,
            start_new_session=True,
        )


def _finish(root: Path, process: subprocess.Popen[str]) -> Run:
    try:
        process.wait(timeout=RUN_TIMEOUT_S)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    stdout = (root / "stdout.txt").read_text()
    stderr = (root / "stderr.txt").read_text()
    assert process.returncode == 0, stderr[-4000:]
    codes = json.loads(stdout.rsplit("exit codes:", 1)[1])
    return Run(root, codes, stdout, stderr)


def _env(root: Path, canaries: Canaries, endpoint: str) -> dict[str, str]:
    env = {
        key: value
        for key, value in subprocess_env(root / "home").items()
        if not key.startswith(("LANGSMITH_", "LANGCHAIN_", "OPENAI_"))
    }
    return env | {
        "OPENAI_API_KEY": canaries.openai,
        "LANGSMITH_API_KEY": canaries.langsmith,
        "LANGSMITH_TRACING": "true",
        "LANGSMITH_ENDPOINT": endpoint,
        "LANGSMITH_PROJECT": "todeval-secrets",
        "LANGSMITH_DISABLE_RUN_COMPRESSION": "true",
        "LANGSMITH_TEST_TRACKING": "false",
    }


@dataclass
class Runs:
    """Both processes: traced to the capture, and traced to a closed port."""

    canaries: Canaries
    traced: Run
    capture: TraceCapture
    dead_endpoint: Run


@pytest.fixture(scope="module")
def runs(llm_server_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runs]:
    """Start both processes at once (the server answers one request at a time anyway)."""
    canaries = Canaries.fresh()
    llm = f"openai:smollm2@{llm_server_url}"
    capture, provider = TraceCapture(), EchoingProvider()
    traced = tmp_path_factory.mktemp("traced")
    (traced / "llm.toml").write_text(
        "[run]\nllm_context_tokens = 2048\nllm_timeout_s = 300\nllm_max_retries = 0\n"
    )
    # No retries, and the circuit opens at the first failure: its note is a reason too.
    (traced / "fault.toml").write_text("[run]\nllm_max_retries = 0\nllm_breaker_failures = 1\n")
    _corpus(traced / "one.jsonl", "secret-1")
    _corpus(traced / "two.jsonl", "fault-1", "fault-2")
    evaluate = ["evaluate", "--suite", "gsr"]
    traced_argvs = [
        [*evaluate, str(traced / "one.jsonl"), "--out", str(traced / "llm"),
         "--config", str(traced / "llm.toml"), "--judge", f"turn_quality={llm}",
         "--judge", f"segmentation={llm}", "--checkpoints", str(traced / "llm.sqlite")],
        [*evaluate, str(traced / "two.jsonl"), "--out", str(traced / "500"),
         "--config", str(traced / "fault.toml"), "--max-concurrency", "1",
         "--judge", f"turn_quality=openai:status-500@{provider.url}/v1",
         "--judge", "segmentation=local:rules", "--checkpoints", str(traced / "500.sqlite")],
        [*evaluate, str(traced / "one.jsonl"), "--out", str(traced / "401"),
         "--judge", f"turn_quality=openai:status-401@{provider.url}/v1",
         "--judge", "segmentation=local:rules", "--checkpoints", str(traced / "401.sqlite")],
    ]  # fmt: skip
    dead = tmp_path_factory.mktemp("dead_endpoint")
    _corpus(dead / "one.jsonl", "secret-2")
    dead_argvs = [
        ["goal-success", str(dead / "one.jsonl"), "--out", str(dead / "gsr"),
         "--teachers", llm, "--segmenter", llm, "--llm-timeout", "300",
         "--checkpoints", str(dead / "gsr.sqlite")],
    ]  # fmt: skip
    closed = f"http://127.0.0.1:{free_port()}"
    first = _start(traced, traced_argvs, _env(traced, canaries, capture.url))
    second = _start(dead, dead_argvs, _env(dead, canaries, closed))
    try:
        yield Runs(canaries, _finish(traced, first), capture, _finish(dead, second))
    finally:
        capture.stop()
        provider.stop()


def _summary(run: Run, out: str) -> dict[str, Any]:
    summary: dict[str, Any] = json.loads((run.root / out / "summary.json").read_text())
    return summary


def _teacher_reasons(run: Run, out: str) -> list[str]:
    reasons = []
    for line in (run.root / out / "results.jsonl").read_text().splitlines():
        for goal in json.loads(line)["goal_success"]["goals"]:
            reasons += [t["rationale"] for turn in goal["turns"] for t in turn["teachers"]]
    return reasons


# -- the tests ----------------------------------------------------------------------------------


def test_llm_runs_leave_no_key_in_any_file_or_stream(runs: Runs) -> None:
    traced = runs.traced
    assert traced.codes[:2] == [0, 0]
    # The LLM judges really ran against the server and wrote every kind of file.
    usage = _summary(traced, "llm")["llm_usage"]
    assert usage["segmentation"]["prompt_tokens"] > 0, usage
    for name in ("llm/results.jsonl", "llm/summary.json", "llm/report.html", "llm.sqlite",
                 "home/llm_cache.sqlite"):  # fmt: skip
        assert (traced.root / name).stat().st_size > 0, name
    assert "DEBUG openai" in traced.stderr or "DEBUG httpx" in traced.stderr  # logs at DEBUG
    gsr = runs.dead_endpoint
    assert gsr.codes == [0] and (gsr.root / "gsr" / "goals.jsonl").exists()

    for run in (traced, gsr):
        assert leaking_files(run.root, runs.canaries) == {}


def test_a_provider_echoing_the_key_gives_reasons_with_a_placeholder(runs: Runs) -> None:
    run = runs.traced
    # Status 500: the first call's null label, then the open circuit's note for the second.
    reasons = _teacher_reasons(run, "500")
    assert reasons and all(PLACEHOLDER in reason for reason in reasons), reasons
    assert any(r.startswith("model call failed: ") for r in reasons), reasons
    assert any(r.startswith("circuit open: ") for r in reasons), reasons
    # Status 401: a credentials error fails the record; its error is in summary and results.
    (failed,) = _summary(run, "401")["failed"]
    assert "rejected the credentials" in failed["error"] and PLACEHOLDER in failed["error"]
    assert not runs.canaries.leaks(json.dumps(failed).encode())


def test_traces_carry_no_key_but_in_the_langsmith_header(runs: Runs) -> None:
    bodies = runs.capture.bodies
    # The judges' calls were traced (the server's and the echoing provider's), the echo
    # among them, redacted before upload.
    assert b"judge:segmentation" in bodies and b"judge:turn_quality" in bodies
    assert b"Incorrect API key provided" in bodies
    assert PLACEHOLDER.encode() in bodies
    assert runs.canaries.leaks(bodies) == []
    sent = {headers.get("x-api-key") for _, headers, _ in runs.capture.requests}
    assert sent == {runs.canaries.langsmith}  # where it belongs: the scan would have seen it


def test_the_langsmith_client_logs_its_failures_without_the_key(runs: Runs) -> None:
    stderr = runs.dead_endpoint.stderr
    assert "langsmith.client" in stderr and "Failed to" in stderr  # the dead endpoint was hit
    assert runs.canaries.leaks(stderr.encode()) == []


# -- where the redaction happens ----------------------------------------------------------------


def test_an_error_is_redacted_before_it_is_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    canaries = Canaries.fresh()
    monkeypatch.setenv("OPENAI_API_KEY", canaries.openai)
    error = RuntimeError("x" * 180 + f" key {canaries.openai} rejected")
    shown = error_text(error, 200)
    assert len(shown) <= 200 and canaries.leaks(shown.encode()) == []
    assert redact(f"Bearer {canaries.openai}") == f"Bearer {PLACEHOLDER}"


@pytest.mark.parametrize(
    "url",
    ["https://user:{key}@llm.example/v1", "https://llm.example/v1?api-key={key}"],
    ids=["userinfo", "query"],
)
def test_a_key_in_a_judge_spec_is_refused_without_echoing_it(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The spec is written with every label and in summary.json's run.context.
    canaries = Canaries.fresh()
    monkeypatch.setenv("OPENAI_API_KEY", canaries.openai)
    with pytest.raises(JudgeSpecError, match="holds a credential") as refused:
        parse_spec("openai:gpt-4o-mini@" + url.format(key=canaries.openai))
    assert canaries.leaks(str(refused.value).encode()) == []
