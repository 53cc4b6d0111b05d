"""Postgres checkpoints (``langgraph-checkpoint-postgres``): one store every worker shares.

A ``postgresql://user:password@host:port/db`` URL opens a ``PostgresSaver`` over one psycopg 3
connection with the settings it requires (autocommit, ``prepare_threshold=0``, dict rows) and
sets its tables up, so any worker, on any machine, resumes any thread.

One connection, not a pool: the batch runner hands the saver to its worker threads, and
``PostgresSaver`` (3.2.0) holds its own lock around every cursor even over a
``ConnectionPool``, so a pool would open more connections without letting two threads of a
process query at once. Checkpoint writes are short next to judging a record.

Errors (a malformed URL, a server that does not answer, a refused login, the ``cluster`` extra
not installed) are a :class:`~stores.checkpoint.CheckpointerError` of one line that names the
server as ``host:port`` and never shows the password.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from todeval.stores.checkpoint import CheckpointerError

if TYPE_CHECKING:
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg import Connection
    from psycopg.rows import DictRow

INSTALL_HINT = ".venv/bin/pip install -e '.[cluster]'"
CONNECT_TIMEOUT_S = 10
"""Seconds to wait for the server unless the URL sets ``connect_timeout``."""
SETUP_LOCK = int.from_bytes(b"todeval:setup", "big") % 2**63
"""The advisory lock key that lets one process at a time create or migrate the tables."""
SETUP_WAIT_S = 300.0
"""How long a process waits for another one's setup (indexes on a big table take a while)."""
_POLL_S = 0.05


def redacted_url(url: str) -> str:
    """``url`` with its password (in the user part or a ``password=`` parameter) as ``***``."""
    try:
        parts = urlsplit(url)
        query = parse_qsl(parts.query)
    except ValueError:
        return url.split("://", 1)[0] + "://***"  # unparsable: nothing after the scheme
    user, at, hosts = parts.netloc.rpartition("@")
    if ":" in user:
        user = user.split(":", 1)[0] + ":***"
    redacted = urlencode([(k, "***" if k == "password" else v) for k, v in query], safe="*/")
    return f"{parts.scheme}://{user}{at}{hosts}{parts.path}" + (f"?{redacted}" if query else "")


def without_password(url: str) -> str:
    """``url`` with no password in it: what a run's summary keeps to reconnect.

    libpq then reads the password from ``PGPASSWORD`` or ``~/.pgpass``, as a team's scripts do.
    """
    try:
        parts = urlsplit(url)
        query = parse_qsl(parts.query)
    except ValueError:
        return url.split("://", 1)[0] + "://"
    user, at, hosts = parts.netloc.rpartition("@")
    kept = urlencode([(k, v) for k, v in query if k != "password"], safe="/")
    return f"{parts.scheme}://{user.split(':', 1)[0]}{at}{hosts}{parts.path}" + (
        f"?{kept}" if kept else ""
    )


def server_address(url: str) -> str:
    """``host:port`` of the server ``url`` names (libpq's defaults where it names none)."""
    try:
        parts = urlsplit(url)
        params = dict(parse_qsl(parts.query))
    except ValueError:
        return "an unparsable address"
    hosts = parts.netloc.rpartition("@")[2]
    if "," in hosts:  # several hosts: as written
        return hosts
    host, port = hosts, ""
    if ":" in hosts.rsplit("]", 1)[-1]:  # host:port or [v6]:port
        host, port = hosts.rsplit(":", 1)
    return f"{params.get('host') or host or 'localhost'}:{params.get('port') or port or '5432'}"


def _password(url: str) -> str | None:
    try:
        parts = urlsplit(url)
        return parts.password or dict(parse_qsl(parts.query)).get("password")
    except ValueError:
        return None


NO_PASSWORD_HINT = (
    "; the URL holds no password (a run's summary.json keeps none): set PGPASSWORD or "
    "~/.pgpass, or pass the URL with its password (--checkpoints)"
)


def failure(url: str, problem: str) -> CheckpointerError:
    """The one-line error about ``url``: where, what, and the URL without its password."""
    problem = problem.replace(url, redacted_url(url))  # drivers quote a URL they cannot parse
    password = _password(url)
    reason = " ".join((problem.replace(password, "***") if password else problem).split())
    if password is None and "password" in reason:
        reason += NO_PASSWORD_HINT
    return CheckpointerError(
        f"Postgres checkpoints at {server_address(url)}: {reason} ({redacted_url(url)})"
    )


def _require_packages() -> None:
    """Import the cluster extra's packages, or say how to install them."""
    try:
        import langgraph.checkpoint.postgres  # noqa: F401
        import psycopg  # noqa: F401
    except ImportError as error:
        raise CheckpointerError(
            f"Postgres checkpoints need todeval's cluster extra ({error.name} is not "
            f"installed): {INSTALL_HINT}"
        ) from None


def _connect(url: str) -> Connection[DictRow]:
    """A connection as PostgresSaver requires it."""
    import psycopg
    from psycopg.conninfo import conninfo_to_dict
    from psycopg.rows import dict_row

    options: dict[str, Any] = {}
    if "connect_timeout" not in conninfo_to_dict(url):
        options["connect_timeout"] = CONNECT_TIMEOUT_S
    return psycopg.Connection.connect(
        url, autocommit=True, prepare_threshold=0, row_factory=dict_row, **options
    )


@contextmanager
def _setup_lock(conn: Connection[DictRow], url: str) -> Iterator[None]:
    """Hold the database's setup advisory lock (session level) while the tables are made.

    Two workers starting on a fresh database would otherwise race: concurrent ``CREATE TABLE
    IF NOT EXISTS`` fails on the catalog's unique index, and both insert the same migration
    row. The lock is polled with ``pg_try_advisory_lock``, not waited on: the holder's ``CREATE
    INDEX CONCURRENTLY`` waits for older open statements, and a waiter blocked inside
    ``pg_advisory_lock`` is one, which would deadlock the two.
    """
    deadline = time.monotonic() + SETUP_WAIT_S
    while not _try_lock(conn):
        if time.monotonic() > deadline:
            raise failure(url, f"another process held the setup lock for {SETUP_WAIT_S:.0f}s")
        time.sleep(_POLL_S)
    try:
        yield
    finally:
        if not conn.closed:
            conn.execute("SELECT pg_advisory_unlock(%s)", (SETUP_LOCK,))


def _try_lock(conn: Connection[DictRow]) -> bool:
    row = conn.execute("SELECT pg_try_advisory_lock(%s) AS locked", (SETUP_LOCK,)).fetchone()
    return bool(row and row["locked"])


@contextmanager
def open_postgres_saver(url: str) -> Iterator[PostgresSaver]:
    """A set-up ``PostgresSaver`` on ``url`` (any libpq URL), closed afterwards.

    Raises:
        CheckpointerError: The cluster extra is missing, the URL is malformed, the server does
            not answer or refuses the login, or the tables cannot be made (one line, no
            password).
    """
    _require_packages()
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver

    try:
        conn = _connect(url)
    except psycopg.Error as error:
        raise failure(url, str(error)) from None
    with conn:
        saver = PostgresSaver(conn)
        try:
            with _setup_lock(conn, url):
                saver.setup()
        except psycopg.Error as error:
            raise failure(url, str(error)) from None
        yield saver
