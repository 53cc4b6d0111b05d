"""Checkpointers: SQLite on disk by default, in memory for tests; the one place to add Postgres."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver

from stores.paths import todeval_home


def default_checkpoint_path() -> Path:
    """``.todeval/checkpoints.sqlite`` under the working folder (``TODEVAL_HOME``)."""
    return todeval_home() / "checkpoints.sqlite"


@contextmanager
def open_checkpointer(target: str | Path | None = None) -> Iterator[BaseCheckpointSaver[str]]:
    """Open a checkpointer for a run and close it afterwards.

    Args:
        target: ``None`` for the default SQLite file, ``":memory:"`` for an in-memory saver
            (tests), a path for a SQLite file, or ``postgres://…`` (not bundled yet: install
            ``langgraph-checkpoint-postgres`` and add it here).
    """
    if target == ":memory:":
        yield InMemorySaver()
        return
    if isinstance(target, str) and target.startswith(("postgres://", "postgresql://")):
        raise NotImplementedError(
            "Postgres checkpoints need langgraph-checkpoint-postgres; "
            "open_checkpointer is the one place to add it."
        )
    path = Path(target) if target is not None else default_checkpoint_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    # check_same_thread=False: the batch runner hands the saver to worker threads; SqliteSaver
    # serialises access with its own lock.
    conn = sqlite3.connect(str(path), check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    try:
        saver = SqliteSaver(conn)
        saver.setup()
        yield saver
    finally:
        conn.close()
