"""Offline defaults for every test run, and how ``pytest -n`` (pytest-xdist) splits the tests."""

import os
import socket
import tempfile

import pytest
from _pytest.nodeid import NodeId

for key, value in {
    "ORT_DISABLE_TELEMETRY": "1",
    "HF_HUB_OFFLINE": "1",
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    "LANGGRAPH_NO_VERSION_CHECK": "true",
    "LANGSMITH_TRACING": "false",
    "LANGSMITH_TEST_TRACKING": "false",
}.items():
    os.environ.setdefault(key, value)

# Checkpoints and caches of a test session go to a throw-away folder, never the repo. Under
# pytest-xdist every worker gets a folder of its own: the workers inherit the controller's env,
# and two processes must not share a checkpoint file or a cache they both write.
_WORKER = os.environ.get("PYTEST_XDIST_WORKER")
if _WORKER:
    os.environ["TODEVAL_HOME"] = tempfile.mkdtemp(prefix=f"todeval-tests-{_WORKER}-")
else:
    os.environ.setdefault("TODEVAL_HOME", tempfile.mkdtemp(prefix="todeval-tests-"))

SHARED_SERVERS = {
    "llm_server_url": "llm-server",
    "server": "langgraph-dev",
    "postgres_server": "postgres",
}
"""Session fixtures that start a server, and the xdist group of the tests that use one.

Under ``pytest -n N --dist loadgroup`` (``make test``) a session fixture runs once per worker;
keeping every test of a server in one group starts each server once per run.
"""


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Give every test an ``xdist_group``: the server it needs, else its module.

    A module is one group so its module-scoped fixtures (a corpus run, a notebook, a wheel)
    run once, on one worker. Without ``-n`` the marks do nothing.

    On an xdist worker with ``--dist loadgroup`` the group is also appended to the node id
    (``path::test@group``), which is what the scheduler reads. pytest-xdist 3.8 does that itself
    by setting ``item._nodeid``, which pytest 9 no longer reads (node ids are ``item._id``), so
    without this every test would be scheduled on its own.
    """
    loadgroup = bool(getattr(config.option, "loadgroup", False))  # set on xdist workers
    for item in items:
        mark = item.get_closest_marker("xdist_group")
        if mark is None:
            names = set(getattr(item, "fixturenames", ()))
            server = next((g for name, g in SHARED_SERVERS.items() if name in names), None)
            module = item.nodeid.split("::")[0].removeprefix("tests/").removesuffix(".py")
            item.add_marker(pytest.mark.xdist_group(server or module))
            mark = item.get_closest_marker("xdist_group")
            assert mark is not None
        if loadgroup and "@" not in item.nodeid:
            item._id = NodeId.parse(f"{item.nodeid}@{mark.args[0]}")  # noqa: SLF001


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
