"""A persistent cache of sentence embeddings in SQLite, behind an in-process LRU.

Keys are sha256 digests of (model id, text), values float32 vectors. The database runs in
WAL mode so several processes can share one file; one connection per process, guarded by a
lock, serves all its threads, and every call does a read query per 1,024 keys and one write
transaction.

The rows live in a rowid table (``vectors``). The table before it (``embeddings``) was
``WITHOUT ROWID``: such a table keeps rows in index pages, where a row may take at most about
a quarter of a 4 kB page, so each 1.6 kB row spilled onto an overflow page of its own. SGD
dev's 43,328 vectors took 198 MB instead of 86 MB, and looking all of them up took 0.90 CPU s
instead of 0.27 s. A file with the old table has its rows moved over when it is first opened.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from todeval.stores.byte_cache import ByteBoundedCache
from todeval.stores.sqlite_wal import use_wal

QUERY_KEYS = 1024
"""Keys per look-up query at most. A query's keys are padded (the last repeated) to a power of
two, so the connection's statement cache holds at most 11 shapes: with one statement per batch
size it kept up to 128, each with its parameters' memory, and SQLite's memory grew with the run."""


BUSY_TIMEOUT_S = 30.0
"""How long a process waits for another's write lock on the file."""


def _select_keys(count: int) -> str:
    return f"SELECT key, vector FROM vectors WHERE key IN ({','.join('?' * count)})"


def _move_old_table(conn: sqlite3.Connection) -> None:
    """Move the rows of the old ``WITHOUT ROWID`` table (``embeddings``) into ``vectors``, once.

    The first process to take the write lock moves them and drops the old table; the others
    find it gone. VACUUM then gives the freed pages back, unless another process is using
    the file (then they are reused by later writes).
    """
    old = "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'embeddings'"
    if conn.execute(old).fetchone() is None:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        if conn.execute(old).fetchone() is not None:
            conn.execute("INSERT OR IGNORE INTO vectors SELECT * FROM embeddings")
            conn.execute("DROP TABLE embeddings")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("PRAGMA busy_timeout = 0")  # never wait for a file in use: VACUUM is optional
    with contextlib.suppress(sqlite3.OperationalError):
        conn.execute("VACUUM")
    conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")


MEMORY_BYTES = 4 * 2**20
"""Bytes the in-process LRU keeps by default: about 2,300 vectors (1.8 kB each with key and
overhead), more than a chunk of dialogues repeats; SQLite answers the rest, so a corpus run's
memory stays flat whatever the model's dimension."""


class EmbeddingCache:
    """Vectors by sha256(model id, text) in SQLite (WAL), behind an in-process LRU.

    Safe for several threads (one connection per process, behind a lock) and several
    processes (WAL, busy timeout, short write transactions).

    Args:
        path: The SQLite file (created with its folder if missing).
        memory_bytes: How many bytes of vectors the in-process LRU keeps (0 turns it off).
    """

    def __init__(self, path: Path | str, *, memory_bytes: int = MEMORY_BYTES) -> None:
        self.path = Path(path)
        self._memory: ByteBoundedCache[bytes, NDArray[np.float32]] = ByteBoundedCache(memory_bytes)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._pid = os.getpid()

    @staticmethod
    def make_key(model_id: str, text: str) -> bytes:
        """sha256 of the model id and the text (NUL-separated: neither contains NUL)."""
        return hashlib.sha256(f"{model_id}\0{text}".encode()).digest()

    def _connection(self) -> sqlite3.Connection:
        # A connection inherited through fork() must not be used; open a new one.
        if self._conn is None or self._pid != os.getpid():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(
                self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
            )
            use_wal(conn, timeout_s=BUSY_TIMEOUT_S)
            conn.execute(
                "CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, "
                "model_id TEXT NOT NULL, vector BLOB NOT NULL)"
            )
            _move_old_table(conn)
            self._conn, self._pid = conn, os.getpid()
        return self._conn

    def get_many(self, model_id: str, texts: Sequence[str]) -> dict[str, NDArray[np.float32]]:
        """Cached vectors of ``texts`` (misses absent); a query per ``QUERY_KEYS`` misses."""
        keys = {self.make_key(model_id, text): text for text in texts}
        found: dict[str, NDArray[np.float32]] = {}
        with self._lock:
            for key, text in keys.items():
                if (vector := self._memory.get(key)) is not None:
                    found[text] = vector
            missing = [key for key, text in keys.items() if text not in found]
            for start in range(0, len(missing), QUERY_KEYS):
                chunk = missing[start : start + QUERY_KEYS]
                shape = 1 << (len(chunk) - 1).bit_length()  # the next power of two
                chunk += chunk[-1:] * (shape - len(chunk))
                rows = self._connection().execute(_select_keys(shape), chunk)
                for key, blob in rows:
                    vector = np.frombuffer(blob, dtype="<f4").astype(np.float32)
                    found[keys[key]] = vector
                    self._memory.put(key, vector)
        return found

    def put_many(self, model_id: str, texts: Sequence[str], vectors: NDArray[np.float32]) -> None:
        """Store ``vectors[i]`` for ``texts[i]``, all in one transaction."""
        rows = []
        for text, vector in zip(texts, vectors, strict=True):
            key = self.make_key(model_id, text)
            stored = np.ascontiguousarray(vector, dtype="<f4")
            rows.append((key, model_id, stored.tobytes()))
        with self._lock:
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.executemany("INSERT OR IGNORE INTO vectors VALUES (?, ?, ?)", rows)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            for (key, _, _), vector in zip(rows, vectors, strict=True):
                self._memory.put(key, np.array(vector, dtype=np.float32))

    def __len__(self) -> int:
        with self._lock:
            row = self._connection().execute("SELECT COUNT(*) FROM vectors").fetchone()
        return int(row[0])

    def close(self) -> None:
        """Close the connection; the cache reopens it on next use."""
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None
