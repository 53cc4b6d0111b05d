"""A persistent cache of LLM judge responses in SQLite.

Keys are sha256 digests of everything that determines a response (see
:meth:`LLMCache.make_key`); values are the raw text of responses that parsed. The database
runs in WAL mode so several processes can share one file, and one connection per process,
guarded by a lock, serves all its threads.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from pathlib import Path

from todeval.stores.paths import todeval_home
from todeval.stores.sqlite_wal import use_wal

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS llm_cache ("
    "key TEXT PRIMARY KEY, value TEXT NOT NULL, created_at REAL NOT NULL)"
)
_BUSY_TIMEOUT_S = 30.0
_MEMORY = ":memory:"


class LLMCache:
    """Key-value store of LLM responses, safe across threads and processes.

    Args:
        path: The SQLite file, or ``":memory:"``; default ``todeval_home()/llm_cache.sqlite``.
    """

    def __init__(self, path: Path | str | None = None) -> None:
        if path is None:
            path = todeval_home() / "llm_cache.sqlite"
        self.path: Path | str = path if str(path) == _MEMORY else Path(path)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._pid = os.getpid()

    @staticmethod
    def make_key(*parts: str) -> str:
        """Return the sha256 hex digest of ``parts`` (unambiguous: parts are JSON-encoded)."""
        return hashlib.sha256(json.dumps(parts).encode("utf-8")).hexdigest()

    def get(self, key: str) -> str | None:
        """Return the cached value for ``key``, or None."""
        with self._lock:
            row = (
                self._connection()
                .execute("SELECT value FROM llm_cache WHERE key = ?", (key,))
                .fetchone()
            )
        return None if row is None else str(row[0])

    def put(self, key: str, value: str) -> None:
        """Store ``value`` under ``key``, replacing any previous value."""
        with self._lock:
            self._connection().execute(
                "INSERT OR REPLACE INTO llm_cache (key, value, created_at) VALUES (?, ?, ?)",
                (key, value, time.time()),
            )

    def clear(self) -> None:
        """Delete every entry."""
        with self._lock:
            self._connection().execute("DELETE FROM llm_cache")

    def close(self) -> None:
        """Close the connection; the cache reopens it on next use."""
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None

    def __len__(self) -> int:
        with self._lock:
            row = self._connection().execute("SELECT COUNT(*) FROM llm_cache").fetchone()
        return int(row[0])

    def _connection(self) -> sqlite3.Connection:
        """The open connection, (re)opened lazily; call with the lock held."""
        if self._conn is not None and self._pid == os.getpid():
            return self._conn
        # A connection must not cross fork(); a child process opens its own.
        self._pid = os.getpid()
        if isinstance(self.path, Path):
            self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(
            str(self.path),
            timeout=_BUSY_TIMEOUT_S,
            isolation_level=None,  # autocommit: every statement is its own short transaction
            check_same_thread=False,  # threads share it under self._lock
        )
        if self.path != _MEMORY:
            use_wal(conn, timeout_s=_BUSY_TIMEOUT_S)  # a cache may lose its last write
        conn.execute(_SCHEMA)
        self._conn = conn
        return conn


_default_cache: LLMCache | None = None
_default_lock = threading.Lock()


def default_llm_cache() -> LLMCache:
    """Return the process-wide cache (``todeval_home()/llm_cache.sqlite``), made on first use."""
    global _default_cache
    with _default_lock:
        if _default_cache is None:
            _default_cache = LLMCache()
        return _default_cache
