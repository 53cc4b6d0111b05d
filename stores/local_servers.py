"""Servers todeval starts on this machine for a run (and its tests): a free port, a clean stop.

:func:`running_chroma` starts a Chroma server (``chroma run`` from the installed chromadb) on a
free port of 127.0.0.1 for a ``with`` block: ``todeval evaluate --workers N`` uses one so that
its worker processes share the memory banks (Chroma's on-disk client is for one process), as a
cluster's workers share a team's server. It reads the address the server says it listens on
back from its log (``listening on address, addr: 127.0.0.1:P``), waits for
``/api/v2/heartbeat`` there and yields the base URL (what ``Context.chroma_server`` takes). A
port taken between choosing and binding is retried on another. Telemetry is off.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

CHROMA = Path(sys.executable).parent / "chroma"
STARTUP_TIMEOUT_S = 60.0
"""Guards against a hung start only; a start takes well under a second."""
PORT_ATTEMPTS = 3
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_LISTENING = re.compile(r"listening on address,\s*addr:\s*(\S+):(\d+)")


class LocalServerError(RuntimeError):
    """A server did not come up (the message has the end of its log)."""


def free_port() -> int:
    """A TCP port nobody listens on right now (the server must still confirm it got it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def stop_group(
    process: subprocess.Popen[Any], first: int = signal.SIGTERM, timeout: float = 30.0
) -> None:
    """Send ``first`` to the group a ``start_new_session=True`` child leads; SIGKILL if it stays."""
    for sig in (first, signal.SIGKILL):
        if process.poll() is not None:
            return
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=timeout)
            return
        except subprocess.TimeoutExpired:
            continue
    process.wait(timeout=timeout)


def log_tail(path: os.PathLike[str] | str, chars: int = 3000) -> str:
    """The end of a server's log, for the error when it does not come up."""
    try:
        with open(path, errors="replace") as log:
            return log.read()[-chars:]
    except OSError:
        return "(no log)"


def _listening_port(log: Path) -> int | None:
    match = _LISTENING.search(_ANSI.sub("", log_tail(log, 100_000)))
    return int(match.group(2)) if match else None


def _heartbeat(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=2) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


def _wait_ready(process: subprocess.Popen[Any], log: Path, asked: int) -> str:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise LocalServerError(f"chroma run exited with {process.returncode}")
        port = _listening_port(log)
        if port is not None:
            if port != asked:
                raise LocalServerError(f"asked for port {asked}, the server took {port}")
            url = f"http://127.0.0.1:{port}"
            if _heartbeat(url):
                return url
        time.sleep(0.1)
    raise LocalServerError(f"no heartbeat after {STARTUP_TIMEOUT_S}s")


@contextmanager
def running_chroma(data: Path, logs: Path | None = None) -> Iterator[str]:
    """A Chroma server storing in ``data`` for the ``with`` block; its base URL.

    Args:
        data: The server's persist folder (the on-disk client's folder format).
        logs: Where its log goes (``chroma-N.log``, N counting the ports tried); default
            beside ``data``.

    Raises:
        LocalServerError: The server did not come up.
    """
    data.mkdir(parents=True, exist_ok=True)
    logs = logs or data.parent
    logs.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False", "NO_COLOR": "1"}
    for attempt in range(PORT_ATTEMPTS):
        log, port = logs / f"chroma-{attempt}.log", free_port()
        command = [str(CHROMA), "run", "--path", str(data), "--host", "127.0.0.1",
                   "--port", str(port)]  # fmt: skip
        with log.open("wb") as sink:
            process = subprocess.Popen(
                command, env=env, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True
            )
        try:
            url = _wait_ready(process, log, port)
        except LocalServerError as error:
            stop_group(process, first=signal.SIGINT)
            if "in use" not in log_tail(log):
                raise LocalServerError(f"{error}; its log ends:\n{log_tail(log)}") from None
            continue
        try:
            yield url
        finally:
            stop_group(process, first=signal.SIGINT)  # the CLI stops cleanly on Ctrl-C
        return
    raise LocalServerError(f"no free port in {PORT_ATTEMPTS} tries (logs in {logs})")
