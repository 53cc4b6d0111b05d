"""D_sym: the symbolic goal database in SQLite (goals, dependency edges, rejected transitions).

One file holds every dialogue. The database runs in WAL mode with a busy timeout so several
processes can share it; writes go through :meth:`SymbolicStore.transaction` (``BEGIN
IMMEDIATE``), which makes id allocation atomic across processes. A store object is not
thread-safe by itself: :class:`stores.goal_memory.GoalMemory` serialises access with its lock.
Each goal row also keeps its description's embedding (float32 bytes), as the paper's goal
record does; the in-process vector index searches these directly.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np
from numpy.typing import NDArray

from todeval.evals.goal_tracking_schema import TRACKED_STATUSES
from todeval.stores.goal_memory.records import Goal, RejectedTransition, StatusEntry, tracked_status
from todeval.stores.sqlite_wal import use_wal

MEMORY = ":memory:"
_BUSY_TIMEOUT_S = 30.0
_STATUS_CHECK = ", ".join(f"'{status}'" for status in TRACKED_STATUSES)
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS goals (
    dialogue_id TEXT NOT NULL,
    id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ({_STATUS_CHECK})),
    status_history TEXT NOT NULL,
    description TEXT NOT NULL,
    domain TEXT NOT NULL,
    intent TEXT NOT NULL,
    slots TEXT NOT NULL,
    dependencies TEXT NOT NULL,
    parent_id TEXT,
    created_turn INTEGER NOT NULL,
    updated_turn INTEGER NOT NULL,
    embedding BLOB NOT NULL,
    PRIMARY KEY (dialogue_id, id),
    UNIQUE (dialogue_id, seq)
);
CREATE TABLE IF NOT EXISTS edges (
    dialogue_id TEXT NOT NULL,
    goal_id TEXT NOT NULL,
    depends_on TEXT NOT NULL,
    relation REAL NOT NULL,
    PRIMARY KEY (dialogue_id, goal_id, depends_on)
);
CREATE TABLE IF NOT EXISTS transitions_rejected (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    dialogue_id TEXT NOT NULL,
    goal_id TEXT NOT NULL,
    from_status TEXT,
    to_status TEXT NOT NULL,
    turn INTEGER NOT NULL,
    reason TEXT NOT NULL,
    proposed_by TEXT NOT NULL,
    logged_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS transitions_rejected_by_dialogue
    ON transitions_rejected (dialogue_id, seq);
"""
_GOAL_COLUMNS = (
    "id, dialogue_id, status, status_history, description, domain, intent, slots, "
    "dependencies, parent_id, created_turn, updated_turn"
)


def _goal_from_row(row: Sequence[Any]) -> Goal:
    """A :class:`Goal` from a row of ``_GOAL_COLUMNS``."""
    history = json.loads(row[3])
    return Goal(
        id=row[0],
        dialogue_id=row[1],
        status=tracked_status(row[2]),
        status_history=tuple(
            StatusEntry(int(entry["turn"]), tracked_status(entry["status"])) for entry in history
        ),
        description=row[4],
        domain=row[5],
        intent=row[6],
        slots=json.loads(row[7]),
        dependencies=tuple(json.loads(row[8])),
        parent_id=row[9],
        created_turn=int(row[10]),
        updated_turn=int(row[11]),
    )


def _goal_row(goal: Goal) -> tuple[Any, ...]:
    """The values of ``_GOAL_COLUMNS`` that store ``goal`` (what :func:`_goal_from_row` reads)."""
    return (
        goal.id,
        goal.dialogue_id,
        goal.status,
        json.dumps([entry.to_dict() for entry in goal.status_history]),
        goal.description,
        goal.domain,
        goal.intent,
        json.dumps(goal.slots),
        json.dumps(list(goal.dependencies)),
        goal.parent_id,
        goal.created_turn,
        goal.updated_turn,
    )


def _read_back(goal: Goal, row: tuple[Any, ...]) -> Goal:
    """``_goal_from_row(row)`` for the ``row`` just made of ``goal``, parsing only what may change.

    The JSON round trip leaves a goal whose history turns and turn numbers are ints and whose
    dependencies are strings as it was, but for its slots (a tuple comes back a list): those
    are read back, the rest is ``goal``'s own (a write read its goal back in about a tenth of
    the tracker's memory time). Any other goal is parsed as stored.
    """
    texts = (goal.id, goal.dialogue_id, goal.status, goal.description, goal.domain, goal.intent)
    exact = (
        all(type(text) is str for text in texts)
        and (goal.parent_id is None or type(goal.parent_id) is str)
        and type(goal.created_turn) is int
        and type(goal.updated_turn) is int
        and all(type(entry.turn) is int for entry in goal.status_history)
        and all(type(goal_id) is str for goal_id in goal.dependencies)
        and type(goal.dependencies) is tuple
        and type(goal.status_history) is tuple
    )
    if not exact:
        return _goal_from_row(row)
    return Goal(  # positional: dataclasses.replace() costs as much as the parse it saves
        goal.id,
        goal.dialogue_id,
        goal.status,
        goal.status_history,
        goal.description,
        goal.domain,
        goal.intent,
        json.loads(row[7]),
        goal.dependencies,
        goal.parent_id,
        goal.created_turn,
        goal.updated_turn,
    )


def _status_filter(statuses: Sequence[str] | None) -> tuple[str, list[str]]:
    """An ``AND status IN (…)`` clause and its parameters (empty for no filter)."""
    if statuses is None:
        return "", []
    marks = ", ".join("?" for _ in statuses)
    return f" AND status IN ({marks})", list(statuses)


class Transaction:
    """:meth:`SymbolicStore.transaction`'s context: ``BEGIN IMMEDIATE``, then commit or roll back.

    A class rather than a generator context: the tracker writes a few times per utterance, and
    a generator's context cost about as much as the ``BEGIN`` and ``COMMIT`` themselves.
    """

    __slots__ = ("_conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def __enter__(self) -> None:
        self._conn.execute("BEGIN IMMEDIATE")

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._conn.execute("COMMIT" if exc_type is None else "ROLLBACK")


class SymbolicStore:
    """The SQLite tables of D_sym.

    Args:
        path: The SQLite file, or ``":memory:"``.
    """

    def __init__(self, path: Path | str) -> None:
        self.path: Path | str = path if str(path) == MEMORY else Path(path)
        if isinstance(self.path, Path):
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(
            str(self.path),
            timeout=_BUSY_TIMEOUT_S,
            isolation_level=None,  # autocommit; writes open explicit transactions
            check_same_thread=False,  # GoalMemory's lock serialises the threads
        )
        if isinstance(self.path, Path):
            use_wal(self._conn, timeout_s=_BUSY_TIMEOUT_S)
        self._conn.executescript(_SCHEMA)

    def transaction(self) -> Transaction:
        """A write transaction (``BEGIN IMMEDIATE``): committed on exit, rolled back on error."""
        return Transaction(self._conn)

    def next_seq(self, dialogue_id: str) -> int:
        """The next goal number of a dialogue (1 for the first); call inside a transaction."""
        row = self._conn.execute(
            "SELECT COALESCE(MAX(seq), 0) FROM goals WHERE dialogue_id = ?", (dialogue_id,)
        ).fetchone()
        return int(row[0]) + 1

    def insert(self, goal: Goal, seq: int, embedding: NDArray[np.float32]) -> Goal:
        """Add a goal row with its embedding; returns the goal as :meth:`get` reads it back."""
        row = _goal_row(goal)
        self._conn.execute(
            f"INSERT INTO goals ({_GOAL_COLUMNS}, seq, embedding) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (*row, seq, np.asarray(embedding, dtype="<f4").tobytes()),
        )
        return _read_back(goal, row)

    def update(self, goal: Goal) -> Goal:
        """Write a goal's mutable fields (all but its id, dialogue, description and parent).

        Returns:
            The goal as :meth:`get` reads it back, given that ``goal`` was read from this store
            (its other fields are the stored ones).
        """
        row = _goal_row(goal)
        self._conn.execute(
            "UPDATE goals SET status = ?, status_history = ?, domain = ?, intent = ?, slots = ?, "
            "dependencies = ?, updated_turn = ? WHERE dialogue_id = ? AND id = ?",
            (row[2], row[3], row[5], row[6], row[7], row[8], row[11], row[1], row[0]),
        )
        return _read_back(goal, row)

    def update_status(self, goal: Goal) -> Goal:
        """:meth:`update` of a goal whose status, status history and updated turn alone changed.

        ``goal`` was read from this store with only those fields changed: its other columns
        are as stored, so only those three are written, and ``goal`` is what :meth:`get` reads
        back (its slots came from the stored JSON already). A turn that is not an int goes
        through :meth:`update` (its JSON round trip may change it).
        """
        entry = goal.status_history[-1] if goal.status_history else None
        if type(goal.updated_turn) is not int or (
            entry is not None and type(entry.turn) is not int
        ):
            return self.update(goal)
        self._conn.execute(
            "UPDATE goals SET status = ?, status_history = ?, updated_turn = ? "
            "WHERE dialogue_id = ? AND id = ?",
            (
                goal.status,
                json.dumps([entry.to_dict() for entry in goal.status_history]),
                goal.updated_turn,
                goal.dialogue_id,
                goal.id,
            ),
        )
        return goal

    def get(self, dialogue_id: str, goal_id: str) -> Goal | None:
        """One goal, or None."""
        row = self._conn.execute(
            f"SELECT {_GOAL_COLUMNS} FROM goals WHERE dialogue_id = ? AND id = ?",
            (dialogue_id, goal_id),
        ).fetchone()
        return None if row is None else _goal_from_row(row)

    def goals(self, dialogue_id: str, statuses: Sequence[str] | None = None) -> list[Goal]:
        """A dialogue's goals in insertion order, optionally only those with given statuses."""
        clause, params = _status_filter(statuses)
        rows = self._conn.execute(
            f"SELECT {_GOAL_COLUMNS} FROM goals WHERE dialogue_id = ?{clause} ORDER BY seq",
            (dialogue_id, *params),
        ).fetchall()
        return [_goal_from_row(row) for row in rows]

    def count(self, dialogue_id: str, statuses: Sequence[str] | None = None) -> int:
        """How many goals a dialogue has (with the given statuses)."""
        clause, params = _status_filter(statuses)
        row = self._conn.execute(
            f"SELECT COUNT(*) FROM goals WHERE dialogue_id = ?{clause}", (dialogue_id, *params)
        ).fetchone()
        return int(row[0])

    def goals_by_id(
        self, dialogue_id: str, goal_ids: Sequence[str], statuses: Sequence[str] | None = None
    ) -> dict[str, Goal]:
        """The goals of ``goal_ids`` that exist (and have one of ``statuses``), by id."""
        if not goal_ids:
            return {}
        clause, params = _status_filter(statuses)
        marks = ", ".join("?" for _ in goal_ids)
        rows = self._conn.execute(
            f"SELECT {_GOAL_COLUMNS} FROM goals WHERE dialogue_id = ? AND id IN ({marks}){clause}",
            (dialogue_id, *goal_ids, *params),
        ).fetchall()
        return {row[0]: _goal_from_row(row) for row in rows}

    def vectors(
        self, dialogue_id: str, statuses: Sequence[str] | None = None
    ) -> tuple[list[str], NDArray[np.float32]]:
        """A dialogue's goal ids and their embeddings, one row per goal (shape (n, dim))."""
        clause, params = _status_filter(statuses)
        rows = self._conn.execute(
            f"SELECT id, embedding FROM goals WHERE dialogue_id = ?{clause} ORDER BY seq",
            (dialogue_id, *params),
        ).fetchall()
        if not rows:
            return [], np.zeros((0, 0), dtype=np.float32)
        matrix = np.frombuffer(b"".join(row[1] for row in rows), dtype="<f4")
        return [str(row[0]) for row in rows], matrix.reshape(len(rows), -1).astype(np.float32)

    def embeddings(self, dialogue_id: str | None = None) -> list[tuple[Goal, NDArray[np.float32]]]:
        """Every goal with its stored embedding (of one dialogue, or of all)."""
        where, params = ("WHERE dialogue_id = ?", (dialogue_id,)) if dialogue_id else ("", ())
        rows = self._conn.execute(
            f"SELECT {_GOAL_COLUMNS}, embedding FROM goals {where} ORDER BY dialogue_id, seq",
            params,
        ).fetchall()
        return [(_goal_from_row(row), np.frombuffer(row[-1], dtype="<f4")) for row in rows]

    def upsert_edge(self, dialogue_id: str, goal_id: str, depends_on: str, relation: float) -> None:
        """Record that ``goal_id`` depends on ``depends_on`` with weight ``relation``."""
        self._conn.execute(
            "INSERT INTO edges (dialogue_id, goal_id, depends_on, relation) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (dialogue_id, goal_id, depends_on) "
            "DO UPDATE SET relation = excluded.relation",
            (dialogue_id, goal_id, depends_on, relation),
        )

    def edges(self, dialogue_id: str) -> list[tuple[str, str, float]]:
        """``(goal_id, depends_on, relation)`` for every dependency of a dialogue."""
        rows = self._conn.execute(
            "SELECT goal_id, depends_on, relation FROM edges WHERE dialogue_id = ? ORDER BY rowid",
            (dialogue_id,),
        ).fetchall()
        return [(str(row[0]), str(row[1]), float(row[2])) for row in rows]

    def log_rejection(self, rejection: RejectedTransition) -> None:
        """Append a refused transition to the log."""
        self._conn.execute(
            "INSERT INTO transitions_rejected (dialogue_id, goal_id, from_status, to_status, "
            "turn, reason, proposed_by, logged_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                rejection.dialogue_id,
                rejection.goal_id,
                rejection.from_status,
                rejection.to_status,
                rejection.turn,
                rejection.reason,
                rejection.proposed_by,
                time.time(),
            ),
        )

    def rejected(self, dialogue_id: str) -> list[RejectedTransition]:
        """A dialogue's refused transitions, oldest first."""
        rows = self._conn.execute(
            "SELECT dialogue_id, goal_id, from_status, to_status, turn, reason, proposed_by "
            "FROM transitions_rejected WHERE dialogue_id = ? ORDER BY seq",
            (dialogue_id,),
        ).fetchall()
        return [RejectedTransition(*row) for row in rows]

    def clear(self, dialogue_id: str) -> None:
        """Delete a dialogue's goals, edges and rejection log."""
        for table in ("goals", "edges", "transitions_rejected"):
            self._conn.execute(f"DELETE FROM {table} WHERE dialogue_id = ?", (dialogue_id,))

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()
