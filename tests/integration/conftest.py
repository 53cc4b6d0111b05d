"""Fixtures for the integration tier: offline subprocess env, small dialogues, process cleanup,
and real servers (langgraph dev, PostgreSQL, Chroma) on free ports."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.llm_server import llm_server_url  # noqa: F401
from tests.servers.chroma import running_chroma
from tests.servers.postgres import PostgresServer, running_postgres, unavailable_reason
from tests.servers.process import free_port, stop_group

REPO_ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
"""The venv the tests run in; ``todeval`` and ``langgraph`` live beside its python."""

OFFLINE_ENV = {
    "ORT_DISABLE_TELEMETRY": "1",
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    "LANGGRAPH_NO_VERSION_CHECK": "true",
    "LANGSMITH_TRACING": "false",
    "LANGSMITH_TEST_TRACKING": "false",
    "HF_HUB_OFFLINE": "1",
    "PYTHONUNBUFFERED": "1",
}

# Topics for synthetic paper-004 dialogues: (user message, assistant response) for the opening
# turn and for one follow-up on the same topic.
TOPICS = [
    (
        ("How do I reset my VPN password?", "Open the self-service portal and choose Reset."),
        ("Does the new password sync to my laptop too?", "Yes, after the next sign-in."),
    ),
    (
        ("What is the parental leave policy?", "Employees get 16 weeks of paid leave."),
        ("Can I split those weeks into two blocks?", "Yes, in up to two blocks."),
    ),
    (
        ("Book a table for two at an Italian place tonight.", "Trattoria Roma has 7pm free."),
        ("Make it 7:30 instead, please.", "Done, 7:30pm for two at Trattoria Roma."),
    ),
    (
        ("How do I file a travel expense report?", "Use the Expenses app and attach receipts."),
        ("Is there a deadline for submitting it?", "Within 30 days of the trip."),
    ),
    (
        ("Find me a flight from Boston to Denver on Friday.", "United has a 9am nonstop."),
        ("How much is a checked bag on that flight?", "The first bag costs $35."),
    ),
]


def make_dialogue(dialog_id: str, topic_indices: list[int]) -> dict[str, Any]:
    """A paper-004 dialog: for each topic index, its opening turn then its follow-up."""
    turns: list[dict[str, Any]] = []
    for index in topic_indices:
        for user_msg, response in TOPICS[index % len(TOPICS)]:
            turns.append(
                {
                    "turn_number": len(turns) + 1,
                    "user_msg": user_msg,
                    "response": response,
                    "source_urls": [],
                    "source_names": [],
                    "source_snippets": [],
                }
            )
    return {"dialog_id": dialog_id, "turns": turns}


def write_corpus(path: Path, count: int) -> list[str]:
    """Write ``count`` small dialogues (4 or 6 turns, 2 or 3 goals) as JSONL; return their ids."""
    ids = []
    with path.open("w") as out:
        for n in range(count):
            topics = [n % 5, (n + 2) % 5] if n % 2 == 0 else [n % 5, (n + 1) % 5, (n + 3) % 5]
            dialogue = make_dialogue(f"dlg-{n:04d}", topics)
            ids.append(dialogue["dialog_id"])
            out.write(json.dumps(dialogue) + "\n")
    return ids


RUN_FACTS = frozenset({"thread_id", "resumed", "latency_ms", "elapsed_s"})
"""What differs between runs of the same records: where and when, never what was judged."""


def judged(value: Any) -> Any:
    """A result line (or any part of one) without its :data:`RUN_FACTS`."""
    if isinstance(value, dict):
        return {k: judged(v) for k, v in value.items() if k not in RUN_FACTS}
    if isinstance(value, list):
        return [judged(item) for item in value]
    return value


def subprocess_env(home: Path, **extra: str) -> dict[str, str]:
    """This process's env with the offline settings forced and ``TODEVAL_HOME=home``."""
    home.mkdir(parents=True, exist_ok=True)
    return {**os.environ, **OFFLINE_ENV, "TODEVAL_HOME": str(home), **extra}


def kill_process_group(process: subprocess.Popen[Any], sig: int = signal.SIGKILL) -> None:
    """Signal the process group a ``start_new_session=True`` child leads, then reap it."""
    stop_group(process, sig)


@pytest.fixture
def spawn() -> Iterator[Any]:
    """Start subprocesses in their own session; every one still alive is killed at teardown."""
    started: list[subprocess.Popen[Any]] = []

    def _spawn(args: list[str], **kwargs: Any) -> subprocess.Popen[Any]:
        process = subprocess.Popen(args, start_new_session=True, **kwargs)
        started.append(process)
        return process

    yield _spawn
    for process in started:
        kill_process_group(process)


CLI_TIMEOUT_S = 600.0
"""Guards a ``todeval`` subprocess against a hang only."""


def run_todeval(args: list[str], home: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """``todeval ARGS`` in a fresh process (offline env, ``TODEVAL_HOME=home``, ``env`` added)."""
    return subprocess.run(
        [str(VENV_BIN / "todeval"), *args],
        cwd=home.parent,
        env=subprocess_env(home, **env),
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
        check=False,
    )


@pytest.fixture
def segmenter_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The segmentation judge specs built in this process, one per ``segment_goals`` run."""
    import todeval.nodes.goal_success.segmentation as segmentation

    calls: list[str] = []
    real_segmenter = segmentation.segmenter

    def counting_segmenter(context: Any) -> Any:
        calls.append(context.spec("segmentation"))
        return real_segmenter(context)

    # segment_goals looks the factory up in its module at call time: one call per execution.
    monkeypatch.setattr(segmentation, "segmenter", counting_segmenter)
    return calls


@pytest.fixture
def dialogue() -> dict[str, Any]:
    """Four turns, two goals: VPN password (turns 1-2), then parental leave (turns 3-4)."""
    return make_dialogue("it-dialogue-1", [0, 1])


# --- langgraph dev -------------------------------------------------------------------------

STARTUP_TIMEOUT_S = 240.0
"""Guards against a hung start only; a cold start imports the graphs and their models."""

ANSI = re.compile(r"\x1b\[[0-9;]*m")
API_URL = re.compile(r"API:\s*(https?://\S+)")


def _server_url(log: Path, process: subprocess.Popen[Any]) -> str:
    """Wait for the ``API: http://host:port`` line the server logs, then for ``/ok``.

    The URL is read from the log, not assumed: ``langgraph dev`` silently moves to another port
    when the one asked for is taken ("Port N is already in use, using port M instead").
    """
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    url = None
    while time.monotonic() < deadline:
        text = ANSI.sub("", log.read_text(errors="replace"))
        if url is None and (match := API_URL.search(text)):
            url = match.group(1).rstrip("/")
        if process.poll() is not None:
            pytest.fail(f"langgraph dev exited with {process.returncode}:\n{text[-4000:]}")
        if url is not None:
            try:
                with urllib.request.urlopen(f"{url}/ok", timeout=5) as response:
                    if response.status == 200:
                        return url
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
        time.sleep(0.2)
    text = ANSI.sub("", log.read_text(errors="replace"))
    pytest.fail(f"langgraph dev not ready after {STARTUP_TIMEOUT_S}s:\n{text[-4000:]}")


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``langgraph dev`` from the repo root on a free port, shared by the tests that need one;
    killed (whole group) at the end of the session."""
    work = tmp_path_factory.mktemp("langgraph_dev")
    log = work / "server.log"
    port = free_port()
    command = [
        str(VENV_BIN / "langgraph"),
        "dev",
        "--config",
        "langgraph.json",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--no-browser",
        "--no-reload",
    ]
    with log.open("wb") as sink:
        process = subprocess.Popen(
            command,
            cwd=REPO_ROOT,
            env=subprocess_env(work / "home"),
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        yield _server_url(log, process)
    finally:
        kill_process_group(process)


# --- PostgreSQL and Chroma servers (tests/servers) ------------------------------------------


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One PostgreSQL server (Debian's binaries, as the postgres user under root) for the
    session, on a free port; stopped and its folder removed at the end."""
    if reason := unavailable_reason():
        pytest.fail(reason)
    with running_postgres() as server:
        yield server


@pytest.fixture
def postgres_url(postgres_server: PostgresServer, request: pytest.FixtureRequest) -> str:
    """The URL of a fresh, empty database on the session's server, for one test."""
    name = re.sub(r"\W+", "_", request.node.name.lower())[:40]
    return postgres_server.create_database(f"{name}_{os.urandom(3).hex()}")


@pytest.fixture
def chroma_server(tmp_path: Path) -> Iterator[str]:
    """A Chroma server (``chroma run``) on a free port with an empty store, for one test;
    its base URL (``http://127.0.0.1:PORT``). Stopped at teardown."""
    with running_chroma(tmp_path / "chroma_server") as url:
        yield url
