"""GoalMemory: ATOD's dual memory store (paper 000, §5.1) with its dependency graph (§5.2)."""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from todeval.evals.goal_tracking_schema import normalise_status
from todeval.stores.byte_cache import ByteBoundedCache
from todeval.stores.embeddings import get_embedder
from todeval.stores.goal_memory.records import (
    Goal,
    LinkResult,
    RejectedTransition,
    StatusEntry,
    TransitionResult,
    tracked_status,
)
from todeval.stores.goal_memory.rules import dependency_graph, link_refusal, transition_refusal
from todeval.stores.goal_memory.symbolic import MEMORY, SymbolicStore
from todeval.stores.goal_memory.vectors import ChromaGoalIndex, rank_by_cosine, unit_rows
from todeval.stores.paths import todeval_home

if TYPE_CHECKING:  # chromadb when a Chroma-backed D_vec opens, networkx when a graph is built
    import networkx as nx
    from chromadb.api import ClientAPI

RECENT_EMBEDDINGS_BYTES = 512 << 10
"""The single texts' unit vectors a memory keeps (about 300 MiniLM vectors)."""

EmbedFunction = Callable[[Sequence[str]], ArrayLike]
"""Texts -> one embedding row per text (any scale: the memory normalises to unit length)."""
VectorBackend = Literal["chroma", "memory"]


def default_goal_memory_path() -> Path:
    """``todeval_home()/goal_memory.sqlite``."""
    return todeval_home() / "goal_memory.sqlite"


class _Writing:
    """:meth:`GoalMemory._writing`'s context (a class: cheaper than a generator's, per write)."""

    __slots__ = ("_memory", "_transaction")

    def __init__(self, memory: GoalMemory) -> None:
        self._memory = memory
        self._transaction = memory._sym.transaction()

    def __enter__(self) -> None:
        try:
            self._transaction.__enter__()
        except BaseException:
            self._memory._written(failed=True)
            raise

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        try:
            self._transaction.__exit__(exc_type, exc, traceback)
        except BaseException:
            self._memory._written(failed=True)
            raise
        self._memory._written(failed=exc_type is not None)


class GoalMemory:
    """Goals of many dialogues: symbolic records (D_sym), their embeddings (D_vec), their graph.

    Every status change goes through :meth:`transition`, which applies only the moves of
    ``VALID_TRANSITIONS``, refuses to complete a goal whose prerequisites are not completed,
    and logs each refusal with its reason. The dependency graph is acyclic: :meth:`add_dependency`
    refuses a link that would close a cycle. One lock serialises the threads of a process;
    SQLite in WAL mode lets processes share the file (a Chroma folder is for one process at a
    time: use a Chroma server to share D_vec).

    Args:
        path: The SQLite file, or ``":memory:"``; default ``todeval_home()/goal_memory.sqlite``.
        vector_backend: ``"chroma"`` (a Chroma collection) or ``"memory"`` (numpy cosine over
            the embeddings D_sym keeps with each goal: no second store, lowest latency).
        chroma_path: Folder of the Chroma store; default ``todeval_home()/chroma``, or an
            in-process ephemeral client when ``path`` is ``":memory:"``.
        chroma_client: A Chroma client instead of ``chroma_path`` (e.g. a server's).
        collection: Chroma collection name; default ``goal_memory``, or a fresh name (dropped
            on :meth:`close`) when ``path`` is ``":memory:"``.
        embed: Texts -> embeddings; default the project's MiniLM (:func:`get_embedder`).

    Raises:
        ValueError: An unknown backend, or both ``chroma_path`` and ``chroma_client``.
    """

    def __init__(
        self,
        path: Path | str | None = None,
        *,
        vector_backend: VectorBackend = "chroma",
        chroma_path: Path | str | None = None,
        chroma_client: ClientAPI | None = None,
        collection: str | None = None,
        embed: EmbedFunction | None = None,
    ) -> None:
        if vector_backend not in ("chroma", "memory"):
            raise ValueError(f"vector_backend must be 'chroma' or 'memory', not {vector_backend!r}")
        if chroma_path is not None and chroma_client is not None:
            raise ValueError("pass either chroma_path or chroma_client, not both")
        self.vector_backend: VectorBackend = vector_backend
        self._embed_function = embed
        self._lock = threading.RLock()
        self._closed = False
        self._index: ChromaGoalIndex | None = None
        if vector_backend == "chroma":
            self._index = ChromaGoalIndex.open(
                collection,
                path=chroma_path,
                client=chroma_client,
                ephemeral=str(path) == MEMORY,
            )
        self._sym = SymbolicStore(path if path is not None else default_goal_memory_path())
        # A private store (":memory:") changes only through this object, so its goals are kept
        # as stored, and each write updates them: the tracker reads a dialogue's goals and
        # single goals many times per utterance (a SELECT and a JSON parse each, about a tenth
        # of a warm SGD-dev run's goal tracking); they take about as much room as the rows, and
        # clear() drops a dialogue's. A file may have other writers, so it is always read.
        self._private = str(self._sym.path) == MEMORY
        self._kept: dict[str, list[Goal]] = {}
        self._committed = 0  # write transactions committed (see version())
        # A new goal's description is embedded for its insert and again for its neighbours,
        # and intent descriptions recur across dialogues: the last few hundred single texts'
        # unit vectors are kept (about half of SGD dev's embeddings were a repeat).
        self._recent: ByteBoundedCache[str, NDArray[np.float32]] = ByteBoundedCache(
            RECENT_EMBEDDINGS_BYTES
        )

    # -- goals ------------------------------------------------------------------------------

    def insert(
        self,
        dialogue_id: str,
        description: str,
        *,
        turn: int,
        domain: str = "",
        intent: str = "",
        slots: Mapping[str, Any] | None = None,
        status: str = "open",
        parent_id: str | None = None,
    ) -> Goal:
        """Insert a new goal into D_sym and D_vec (ATOD's Match=0 branch).

        ``status`` may be any tracked status: a goal may be raised and settled in one utterance.
        The stored goal's id is ``g<n>`` (n counts the dialogue's goals from 1).

        Raises:
            ValueError: Empty description, unknown status, or unknown parent.
            TypeError: Slot values that are not JSON-serialisable.
        """
        if not description.strip():
            raise ValueError("a goal needs a description")
        initial = tracked_status(str(normalise_status(status)))
        vector = self._embed_one(description)
        with self._lock, self._writing():
            if parent_id is not None and self._goal(dialogue_id, parent_id) is None:
                raise ValueError(f"unknown parent goal {parent_id!r} in dialogue {dialogue_id!r}")
            seq = self._sym.next_seq(dialogue_id)
            goal = Goal(
                id=f"g{seq}",
                dialogue_id=dialogue_id,
                status=initial,
                status_history=(StatusEntry(turn, initial),),
                description=description,
                domain=domain,
                intent=intent,
                slots=dict(slots or {}),
                parent_id=parent_id,
                created_turn=turn,
                updated_turn=turn,
            )
            self._keep(self._sym.insert(goal, seq, vector))
            if self._index is not None:
                self._index.upsert([goal], vector[None, :])
        return goal

    def _writing(self) -> _Writing:
        """A write transaction of D_sym; if it fails, the goals kept may be ahead: dropped."""
        return _Writing(self)

    def _written(self, failed: bool) -> None:
        """A write transaction ended: the goals kept are dropped if it ``failed``, else counted."""
        if failed:
            self._kept.clear()
        else:
            self._committed += 1

    def version(self) -> int | None:
        """A number that moves whenever this memory's goals may have changed, or None.

        A private store changes only through this object: while the number stays, so does every
        dialogue's :meth:`snapshot`. A file may have other writers: None.
        """
        return self._committed if self._private else None

    def _stored(self, dialogue_id: str) -> list[Goal] | None:
        """A private store's goals of the dialogue as stored (read once); None for a file."""
        if not self._private:
            return None
        kept = self._kept.get(dialogue_id)
        if kept is None:
            kept = self._kept[dialogue_id] = self._sym.goals(dialogue_id)
        return kept

    def _keep(self, goal: Goal) -> None:
        """A private store's goal as just written (new, or in place of its older self)."""
        kept = self._kept.get(goal.dialogue_id)
        if kept is None:
            return  # not read yet: the first read gets it from D_sym
        for position, old in enumerate(kept):
            if old.id == goal.id:
                kept[position] = goal
                return
        kept.append(goal)  # a new goal has the highest seq: it goes last

    def _goal(self, dialogue_id: str, goal_id: str) -> Goal | None:
        """One goal as stored (kept, for a private store), or None."""
        stored = self._stored(dialogue_id)
        if stored is None:
            return self._sym.get(dialogue_id, goal_id)
        return next((goal for goal in stored if goal.id == goal_id), None)

    def _update(self, goal: Goal) -> None:
        """Write a goal read from this memory, with changed fields, to D_sym (and keep it)."""
        self._keep(self._sym.update(goal))

    def get(self, dialogue_id: str, goal_id: str) -> Goal | None:
        """One goal, or None if the dialogue has no goal with that id."""
        with self._lock:
            return self._goal(dialogue_id, goal_id)

    def goals(self, dialogue_id: str, statuses: Sequence[str] | None = None) -> list[Goal]:
        """A dialogue's goals in insertion order (only those with ``statuses`` if given)."""
        wanted = None if statuses is None else [tracked_status(status) for status in statuses]
        with self._lock:
            every = self._stored(dialogue_id)
            if every is None:
                return self._sym.goals(dialogue_id, wanted)
            if wanted is None:
                return list(every)
            return [goal for goal in every if goal.status in wanted]

    def update_slots(
        self, dialogue_id: str, goal_id: str, slots: Mapping[str, Any], *, turn: int
    ) -> Goal:
        """Merge slot values into a goal (new values win) and stamp ``updated_turn``."""
        with self._lock, self._writing():
            goal = self._goal(dialogue_id, goal_id)
            if goal is None:
                raise KeyError(f"unknown goal {goal_id!r} in dialogue {dialogue_id!r}")
            updated = replace(goal, slots={**goal.slots, **slots}, updated_turn=turn)
            self._update(updated)
        return updated

    def rename_service(self, dialogue_id: str, goal_id: str, domain: str, *, turn: int) -> Goal:
        """Give a goal another domain or service (e.g. the sibling the dialogue was about)."""
        with self._lock, self._writing():
            goal = self._goal(dialogue_id, goal_id)
            if goal is None:
                raise KeyError(f"unknown goal {goal_id!r} in dialogue {dialogue_id!r}")
            updated = replace(goal, domain=domain, updated_turn=turn)
            self._update(updated)
        return updated

    def transition(
        self, dialogue_id: str, goal_id: str, new_status: str, *, turn: int, proposed_by: str
    ) -> TransitionResult:
        """Apply a proposed status change if it is valid; log it with its reason if not.

        Returns:
            ``applied`` (history appended), ``unchanged`` (same status: nothing written), or
            ``rejected`` (unknown goal or status, a move ``VALID_TRANSITIONS`` forbids, or
            completion with unmet prerequisites).
        """
        wanted = str(normalise_status(new_status))
        with self._lock:
            if self._private:  # nothing to write: no transaction (most proposals on SGD dev)
                goal = self._goal(dialogue_id, goal_id)
                if goal is not None and goal.status == wanted:
                    return TransitionResult("unchanged", goal, goal.status, wanted)
            return self._transition(dialogue_id, goal_id, wanted, turn, proposed_by)

    def _transition(
        self, dialogue_id: str, goal_id: str, wanted: str, turn: int, proposed_by: str
    ) -> TransitionResult:
        """:meth:`transition` of a normalised status, in a write transaction."""
        with self._writing():
            goal = self._goal(dialogue_id, goal_id)
            if goal is not None and goal.status == wanted:
                return TransitionResult("unchanged", goal, goal.status, wanted)
            refusal = (
                f"unknown goal {goal_id!r}"
                if goal is None
                else transition_refusal(goal, wanted, self._prerequisites(goal))
            )
            if goal is None or refusal is not None:
                before = None if goal is None else goal.status
                reason = str(refusal)
                self._sym.log_rejection(
                    RejectedTransition(
                        dialogue_id, goal_id, before, wanted, turn, reason, proposed_by
                    )
                )
                return TransitionResult("rejected", goal, before, wanted, reason)
            status = tracked_status(wanted)
            updated = replace(
                goal,
                status=status,
                status_history=(*goal.status_history, StatusEntry(turn, status)),
                updated_turn=turn,
            )
            # Only the status fields changed: the rest of the row stays as it is.
            self._keep(self._sym.update_status(updated))
            if self._index is not None:
                self._index.set_status(updated)
        return TransitionResult("applied", updated, goal.status, wanted)

    def rejected(self, dialogue_id: str) -> list[RejectedTransition]:
        """The dialogue's refused transitions, oldest first."""
        with self._lock:
            return self._sym.rejected(dialogue_id)

    # -- dependency graph --------------------------------------------------------------------

    def add_dependency(
        self, dialogue_id: str, goal_id: str, depends_on: str, *, relation: float
    ) -> LinkResult:
        """Record that ``goal_id`` needs ``depends_on`` completed first (ATOD's Evolve step).

        ``relation`` is the score that justified the link (``rel >= delta``).

        Returns:
            Added, or refused with the reason: a self-link, an unknown goal, a cycle, or a
            completed goal gaining a prerequisite that is not completed.

        Raises:
            ValueError: ``relation`` is not a finite number.
        """
        if not math.isfinite(relation):
            raise ValueError(f"relation must be a finite number, not {relation!r}")
        with self._lock, self._writing():
            goal = self._goal(dialogue_id, goal_id)
            prerequisite = self._goal(dialogue_id, depends_on)
            if goal is None or prerequisite is None:
                missing = goal_id if goal is None else depends_on
                return LinkResult(False, f"unknown goal {missing!r}")
            edges = self._sym.edges(dialogue_id)
            reason = link_refusal(edges, goal, prerequisite, lambda: self._graph(dialogue_id))
            if reason is not None:
                return LinkResult(False, reason)
            self._sym.upsert_edge(dialogue_id, goal_id, depends_on, float(relation))
            if depends_on not in goal.dependencies:
                self._update(replace(goal, dependencies=(*goal.dependencies, depends_on)))
        return LinkResult(True)

    def graph(self, dialogue_id: str) -> nx.DiGraph:
        """The dialogue's dependency graph, loaded from D_sym (see :func:`dependency_graph`)."""
        with self._lock:
            return self._graph(dialogue_id)

    def _graph(self, dialogue_id: str) -> nx.DiGraph:
        goals = self._stored(dialogue_id)
        return dependency_graph(
            dialogue_id,
            self._sym.goals(dialogue_id) if goals is None else goals,
            self._sym.edges(dialogue_id),
        )

    def _prerequisites(self, goal: Goal) -> list[Goal]:
        """The goals ``goal`` depends on, in its ``dependencies`` order."""
        found = (self._goal(goal.dialogue_id, goal_id) for goal_id in goal.dependencies)
        return [prerequisite for prerequisite in found if prerequisite is not None]

    # -- semantic retrieval ------------------------------------------------------------------

    def neighbours(
        self, dialogue_id: str, text: str, k: int = 5, *, statuses: Sequence[str] | None = None
    ) -> list[tuple[Goal, float]]:
        """``(goal, cosine)`` of the dialogue's ``k`` goals nearest ``text``, most similar first.

        ATOD's existence checking, Stage 1.
        """
        wanted = None if statuses is None else [tracked_status(status) for status in statuses]
        vector = self._embed_one(text)
        with self._lock:
            if self._index is None:
                goal_ids, matrix = self._sym.vectors(dialogue_id, wanted)
                hits = rank_by_cosine(goal_ids, matrix, vector, k)
            else:
                available = 0 if k <= 0 else self._sym.count(dialogue_id, wanted)
                hits = self._index.query(dialogue_id, vector, min(k, available), wanted)
            # D_sym is the record: a vector whose row is gone (or changed status) is skipped.
            by_id = self._goals_by_id(dialogue_id, [goal_id for goal_id, _ in hits], wanted)
        return [(by_id[goal_id], score) for goal_id, score in hits if goal_id in by_id]

    def _goals_by_id(
        self, dialogue_id: str, goal_ids: Sequence[str], statuses: Sequence[str] | None
    ) -> dict[str, Goal]:
        stored = self._stored(dialogue_id)
        if stored is None:
            return self._sym.goals_by_id(dialogue_id, goal_ids, statuses)
        return {
            goal.id: goal
            for goal in stored
            if goal.id in goal_ids and (statuses is None or goal.status in statuses)
        }

    def reindex(self, dialogue_id: str | None = None) -> int:
        """Rebuild D_vec from the embeddings D_sym keeps (e.g. after losing the Chroma folder).

        Returns:
            How many vectors were written (0 with the in-process backend: nothing to rebuild).
        """
        with self._lock:
            if self._index is None:
                return 0
            rows = self._sym.embeddings(dialogue_id)
            if rows:
                self._index.upsert([goal for goal, _ in rows], np.stack([v for _, v in rows]))
            return len(rows)

    def _embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Unit-length embeddings of ``texts``, shape (len(texts), dim)."""
        function = self._embed_function or get_embedder().embed
        return unit_rows(function(list(texts)), len(texts))

    def _embed_one(self, text: str) -> NDArray[np.float32]:
        """``_embed([text])[0]``, kept for the next time ``text`` comes (read-only)."""
        vector = self._recent.get(text)
        if vector is None:
            vector = self._embed([text])[0]
            self._recent.put(text, vector)
        return vector

    def embed_ahead(self, texts: Sequence[str]) -> None:
        """Embed the ``texts`` not kept yet in one batch, for :meth:`insert` to find.

        A chunk's goal descriptions, known before its dialogues run: one model call for all
        of them instead of one per goal (MiniLM's vectors do not depend on the batch).
        """
        missing = [text for text in dict.fromkeys(texts) if self._recent.get(text) is None]
        if missing:
            for text, vector in zip(missing, self._embed(missing), strict=True):
                self._recent.put(text, vector.copy())  # a row of its own, not a view

    # -- whole dialogues, lifecycle ----------------------------------------------------------

    def snapshot(self, dialogue_id: str) -> list[dict[str, Any]]:
        """The dialogue's goals as JSON-serialisable dicts (:meth:`Goal.from_dict` reads them)."""
        return [goal.to_dict() for goal in self.goals(dialogue_id)]

    def restore(self, dialogue_id: str, snapshot: Sequence[Mapping[str, Any]]) -> None:
        """Make the dialogue's memory exactly ``snapshot`` (from :meth:`snapshot`).

        A checkpointed graph keeps the snapshot in its state; restoring it after a crash or a
        resume undoes writes of a turn that never reached its checkpoint.
        """
        goals = [replace(Goal.from_dict(dict(item)), dialogue_id=dialogue_id) for item in snapshot]
        vectors = self._embed([goal.description for goal in goals]) if goals else None
        with self._lock, self._writing():
            self._kept.pop(dialogue_id, None)  # read back from D_sym when next asked
            self._sym.clear(dialogue_id)
            if self._index is not None:
                self._index.delete_dialogue(dialogue_id)
            if vectors is not None:
                for seq, (goal, vector) in enumerate(zip(goals, vectors, strict=True), start=1):
                    self._sym.insert(goal, seq, vector)
                if self._index is not None:
                    self._index.upsert(goals, vectors)
            for goal in goals:
                for prerequisite in goal.dependencies:
                    self._sym.upsert_edge(dialogue_id, goal.id, prerequisite, 1.0)

    def clear(self, dialogue_id: str) -> None:
        """Forget a dialogue: its goals, edges, rejection log and vectors."""
        with self._lock, self._writing():
            self._kept.pop(dialogue_id, None)
            self._sym.clear(dialogue_id)
            if self._index is not None:
                self._index.delete_dialogue(dialogue_id)

    def close(self) -> None:
        """Close the database (and drop a collection this memory made for itself)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._index is not None and self._index.owned:
                self._index.drop()
            self._sym.close()

    def __enter__(self) -> GoalMemory:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
