"""Offline defaults for every test run."""

import os
import socket
import tempfile

import pytest

for key, value in {
    "ORT_DISABLE_TELEMETRY": "1",
    "HF_HUB_OFFLINE": "1",
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    "LANGGRAPH_NO_VERSION_CHECK": "true",
    "LANGSMITH_TRACING": "false",
    "LANGSMITH_TEST_TRACKING": "false",
}.items():
    os.environ.setdefault(key, value)

# Checkpoints and caches of a test session go to a throw-away folder, never the repo.
os.environ.setdefault("TODEVAL_HOME", tempfile.mkdtemp(prefix="todeval-tests-"))


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Refuse (and record) every connection and name lookup the process tries."""
    attempts: list[object] = []

    def refuse(*args: object, **kwargs: object) -> None:
        attempts.append(args)
        raise OSError("network disabled in this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    return attempts
