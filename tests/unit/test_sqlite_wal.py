"""WAL mode on a file another process is writing: the switch waits instead of failing."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from todeval.stores.embedding_cache import EmbeddingCache
from todeval.stores.sqlite_wal import use_wal


@contextmanager
def write_lock_held(path: Path, seconds: float) -> Iterator[None]:
    """Another connection holds the write lock of ``path`` (rollback mode) for ``seconds``."""
    taken, released = threading.Event(), threading.Event()

    def hold() -> None:
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("CREATE TABLE IF NOT EXISTS creating (x)")
        other.execute("BEGIN IMMEDIATE")
        taken.set()
        released.wait(seconds)
        other.execute("COMMIT")
        other.close()

    thread = threading.Thread(target=hold)
    thread.start()
    taken.wait()
    timer = threading.Timer(seconds, released.set)
    timer.start()
    try:
        yield
    finally:
        released.set()
        timer.cancel()
        thread.join()


def _plain_switch(conn: sqlite3.Connection) -> None:
    conn.execute("PRAGMA journal_mode=WAL")


def _short_use_wal(conn: sqlite3.Connection) -> None:
    use_wal(conn, timeout_s=0.2)


@pytest.mark.parametrize(
    "switch",
    [_plain_switch, _short_use_wal],
    ids=["plain: at once, whatever the busy timeout", "use_wal: at its own timeout"],
)
def test_the_switch_fails_while_another_connection_keeps_the_write_lock(
    tmp_path: Path, switch: Callable[[sqlite3.Connection], None]
) -> None:
    # The plain switch is the premise: SQLite's busy timeout does not cover it.
    path = tmp_path / "file.sqlite"
    with write_lock_held(path, 5.0):
        conn = sqlite3.connect(path, timeout=10.0, isolation_level=None)
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            switch(conn)
        conn.close()


def test_use_wal_waits_for_the_lock_and_switches(tmp_path: Path) -> None:
    path = tmp_path / "file.sqlite"
    with write_lock_held(path, 0.3):
        conn = sqlite3.connect(path, timeout=10.0, isolation_level=None)
        use_wal(conn, timeout_s=10.0)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    conn.close()


def test_use_wal_does_not_retry_other_errors(tmp_path: Path) -> None:
    path = tmp_path / "file.sqlite"
    path.write_bytes(b"not a database" * 100)
    conn = sqlite3.connect(path, isolation_level=None)
    with pytest.raises(sqlite3.DatabaseError, match="not a database"):
        use_wal(conn, timeout_s=30.0)  # at once: the test would take 30 s otherwise
    conn.close()


def test_an_embedding_cache_opens_a_file_another_connection_is_creating(tmp_path: Path) -> None:
    path = tmp_path / "emb.sqlite"
    with write_lock_held(path, 0.3):
        cache = EmbeddingCache(path)
        cache.put_many("model", ["text"], np.ones((1, 4), dtype=np.float32))
    assert len(cache) == 1
    cache.close()
