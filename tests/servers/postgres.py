"""A real PostgreSQL server for the tests: Debian's binaries, a temp folder, a free port.

:func:`running_postgres` runs ``initdb`` and ``postgres`` from ``/usr/lib/postgresql/*/bin``
(``make postgres`` installs Debian's ``postgresql`` package) on 127.0.0.1, with its unix socket
in the same temp folder, and yields a :class:`PostgresServer`. ``initdb`` refuses to run as
root, and CI runs as root: then both run as the ``postgres`` OS user (``Popen(user=...)``, a
setuid in the child) over a folder chowned to it. The folder is made under ``/tmp`` rather than
pytest's base temp dir, whose 0700 folders the postgres user could not enter.

The port is chosen free, then confirmed over a connection: ``inet_server_port()`` and
``data_directory`` must be this server's (another server could have taken the port meanwhile;
a clash at bind time is retried on another port). The superuser ``todeval`` logs in over TCP
with a password (scram-sha-256), so the URLs carry one, as a team's would. Durability is off
(``fsync``, ``synchronous_commit``, ``full_page_writes``): the data lives for one test session.
"""

from __future__ import annotations

import glob
import os
import re
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.servers.process import free_port, log_tail, stop_group

BIN_GLOB = "/usr/lib/postgresql/*/bin"
SUPERUSER = "todeval"
OS_USER = "postgres"
"""Who runs the server when the tests run as root."""
STARTUP_TIMEOUT_S = 60.0
"""Guards against a hung start only; a start takes about a second."""
PORT_ATTEMPTS = 3
INSTALL_HINT = "run `make postgres` (it installs Debian's postgresql package)"
FAST_SETTINGS = ("fsync=off", "synchronous_commit=off", "full_page_writes=off")


class PostgresServerError(RuntimeError):
    """The server could not be set up or did not come up (the message has its log's end)."""


def postgres_bin_dir() -> Path | None:
    """The newest ``/usr/lib/postgresql/<version>/bin`` holding ``initdb`` and ``postgres``."""
    found = [
        Path(folder)
        for folder in glob.glob(BIN_GLOB)
        if (Path(folder) / "initdb").exists() and (Path(folder) / "postgres").exists()
    ]
    return max(found, key=lambda folder: _version(folder.parent.name), default=None)


def _version(name: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", name)) or (0,)


def unavailable_reason() -> str | None:
    """Why no server can be started here, or None."""
    if postgres_bin_dir() is None:
        return f"PostgreSQL's initdb and postgres are not under {BIN_GLOB}: {INSTALL_HINT}"
    if os.geteuid() == 0:
        try:
            import pwd

            pwd.getpwnam(OS_USER)
        except KeyError:
            return f"running as root, but there is no {OS_USER!r} OS user to run PostgreSQL as"
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed: .venv/bin/pip install -e '.[dev,cluster]'"
    return None


@dataclass(frozen=True)
class PostgresServer:
    """A running server: where it listens and how to log in."""

    host: str
    port: int
    password: str
    folder: Path
    """The temp folder holding ``data/``, ``sockets/`` and ``server.log``."""

    def url(self, database: str = "postgres") -> str:
        """``postgresql://todeval:PASSWORD@127.0.0.1:PORT/database``."""
        return f"postgresql://{SUPERUSER}:{self.password}@{self.host}:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        """Create an empty database; its URL."""
        import psycopg
        from psycopg import sql

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        return self.url(name)


def _as_server_user() -> dict[str, Any]:
    """``Popen`` arguments that drop root to the postgres user (nothing when not root)."""
    if os.geteuid() != 0:
        return {}
    return {"user": OS_USER, "group": OS_USER, "extra_groups": []}


def _give_to_server_user(*paths: Path) -> None:
    if os.geteuid() == 0:
        for path in paths:
            shutil.chown(path, OS_USER, OS_USER)


def _initdb(bin_dir: Path, folder: Path, password: str) -> Path:
    """A fresh cluster in ``folder/data`` with the password-protected superuser."""
    data, pwfile = folder / "data", folder / "pwfile"
    pwfile.write_text(password + "\n")
    pwfile.chmod(0o600)
    _give_to_server_user(pwfile)
    command = [
        str(bin_dir / "initdb"),
        "--pgdata", str(data),
        "--username", SUPERUSER,
        "--pwfile", str(pwfile),
        "--auth-host", "scram-sha-256",
        "--auth-local", "trust",
        "--encoding", "UTF8",
        "--no-locale",
        "--no-sync",
    ]  # fmt: skip
    done = subprocess.run(
        command, cwd=folder, capture_output=True, text=True, check=False, **_as_server_user()
    )
    pwfile.unlink()
    if done.returncode != 0:
        raise PostgresServerError(f"initdb failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return data


def _connect_when_ready(server: PostgresServer, process: subprocess.Popen[Any]) -> None:
    """Wait until the server takes logins, then check it is ours, on the port asked for."""
    import psycopg

    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while True:
        if process.poll() is not None:
            raise PostgresServerError(f"postgres exited with {process.returncode}")
        try:
            with psycopg.connect(server.url(), connect_timeout=2) as conn:
                row = conn.execute(
                    "SELECT inet_server_port(), current_setting('data_directory')"
                ).fetchone()
            break
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise PostgresServerError(f"no login after {STARTUP_TIMEOUT_S}s") from None
            time.sleep(0.1)
    port, data = row if row is not None else (None, "")
    if port != server.port or Path(data).resolve() != (server.folder / "data").resolve():
        raise PostgresServerError(f"the server on port {server.port} is not ours: {row}")


def _start(bin_dir: Path, folder: Path, password: str) -> tuple[subprocess.Popen[Any], int]:
    """``postgres`` on a free port (another one if the port was taken meanwhile)."""
    log = folder / "server.log"
    for _ in range(PORT_ATTEMPTS):
        port = free_port()
        command = [
            str(bin_dir / "postgres"),
            "-D", str(folder / "data"),
            "-h", "127.0.0.1",
            "-p", str(port),
            "-k", str(folder / "sockets"),
            *(part for setting in FAST_SETTINGS for part in ("-c", setting)),
        ]  # fmt: skip
        with log.open("ab") as sink:
            process = subprocess.Popen(
                command,
                cwd=folder,
                stdout=sink,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                **_as_server_user(),
            )
        server = PostgresServer("127.0.0.1", port, password, folder)
        try:
            _connect_when_ready(server, process)
            return process, port
        except PostgresServerError as error:
            stop_group(process)
            if "already in use" not in log_tail(log):
                raise PostgresServerError(f"{error}; its log ends:\n{log_tail(log)}") from None
    raise PostgresServerError(f"no free port in {PORT_ATTEMPTS} tries:\n{log_tail(log)}")


@contextmanager
def running_postgres(database: str = "todeval") -> Iterator[PostgresServer]:
    """A PostgreSQL server with an empty ``database``, for the ``with`` block; stopped after.

    Raises:
        PostgresServerError: No binaries (run ``make postgres``), or the server did not start.
    """
    if reason := unavailable_reason():
        raise PostgresServerError(reason)
    bin_dir = postgres_bin_dir()
    assert bin_dir is not None
    folder = Path(tempfile.mkdtemp(prefix="todeval-postgres-"))
    try:
        (folder / "sockets").mkdir()
        _give_to_server_user(folder, folder / "sockets")
        password = secrets.token_urlsafe(18)
        _initdb(bin_dir, folder, password)
        process, port = _start(bin_dir, folder, password)
        try:
            server = PostgresServer("127.0.0.1", port, password, folder)
            server.create_database(database)
            yield server
        finally:
            stop_group(process, first=signal.SIGINT)  # PostgreSQL's fast shutdown
    finally:
        shutil.rmtree(folder, ignore_errors=True)
