"""Putting a SQLite file that several processes open at once into WAL mode."""

from __future__ import annotations

import sqlite3
import time

_RETRY_S = 0.005


def use_wal(conn: sqlite3.Connection, *, timeout_s: float) -> None:
    """Switch ``conn``'s file to WAL with ``synchronous=NORMAL``, waiting up to ``timeout_s``.

    SQLite does not call the busy handler for ``PRAGMA journal_mode``: while another
    connection holds the write lock of a file still in rollback mode (as the first process
    does while it creates the tables of a new file), the switch fails at once with "database
    is locked", whatever the connection's timeout. Three processes opening a new file at the
    same moment failed so about one time in three; the switch is retried until the timeout.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            break
        except sqlite3.OperationalError as error:
            if error.sqlite_errorcode & 0xFF != sqlite3.SQLITE_BUSY:
                raise
            if time.monotonic() >= deadline:
                raise
            time.sleep(_RETRY_S)
    conn.execute("PRAGMA synchronous=NORMAL")
