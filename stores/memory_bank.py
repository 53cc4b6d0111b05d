"""Individual memory banks: QA memory units per user, found densely, by BM25 or both (paper 001).

MAP's memory ``M = {(k_i, v_i)}`` (§4.1) holds, per stored session, an intent description and
QA pairs; one :class:`~evals.memory_schema.MemoryUnit` is one QA pair with its session's intent
description. Memory activation (§4.2) ranks a user's units against a query:

- ``dense``: cosine of MiniLM embeddings. A unit is embedded as
  ``"{intent_description} {question} {answer}"``: the paper compares the query with the intent
  key ``k_j``, and adding the QA pair lets units of one session differ (a query naming a value
  finds the answer stating it).
- ``bm25``: ``rank_bm25.BM25Okapi`` over the same text, lower-cased word tokens, one index
  per user (built on first search, rebuilt after the user's units change).
- ``hybrid``: the mean of the dense and BM25 scores, each min-max scaled over the user's units.

That ranks QA units one by one (:meth:`MemoryBank.search`). The paper's activation ranks the
sessions' intent keys instead (:meth:`MemoryBank.search_by_intent`): the same three modes over
each stored session's ``intent_description`` (embedded on first use), the best sessions' units
following in session order.

Every mode returns scores in [0, 1], min-max scaled over the user's units (the best unit scores
1; when all tie, all get 1, or 0 if the raw scores are 0), so ``s_prev`` is on the judger's
scale for the re-rank ``alpha * s_prev + (1 - alpha) * s_judger`` (Eq. 4).

Backends: ``chroma`` keeps units and vectors in a Chroma collection (metadata ``user_id``,
``session_id``, ``intent``; reads filter by ``user_id``), on disk or on a Chroma server
(``server=``) that many processes and machines share, so a bank survives the process;
``memory`` keeps them in process. Both rank exactly with numpy over the user's units
(a user has tens to a few hundred); Chroma is the store, not an approximate index. Re-adding a
unit with the same ``unit_id`` replaces it. Unit ids are ``individual/session/slot``, so keep one
collection per benchmark (``collection=``) rather than mixing benchmarks in one.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

import numpy as np
from numpy.typing import NDArray
from rank_bm25 import BM25Okapi

from todeval.evals.memory_schema import MemoryUnit
from todeval.stores.embeddings import cosine_matrix, get_embedder
from todeval.stores.paths import todeval_home

if TYPE_CHECKING:  # chromadb takes about 0.4 s to import: loaded when a bank opens
    from chromadb.api.models.Collection import Collection

RetrievalMode = Literal["dense", "bm25", "hybrid"]
RETRIEVAL_MODES: tuple[RetrievalMode, ...] = ("dense", "bm25", "hybrid")
DEFAULT_COLLECTION = "memory_bank"
_TOKEN = re.compile(r"\w+")
# MemoryUnit fields kept as Chroma metadata (besides the three the paper names).
_UNIT_FIELDS = ("intent_description", "question", "answer", "slot", "value")


class Embedder(Protocol):
    """Anything that embeds texts into L2-normalised rows (``MiniLMEmbedder`` does)."""

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Embed ``texts``: shape (len(texts), dim), unit-length rows."""
        ...


def bank_folder(path: Path | str | None) -> Path:
    """The banks' on-disk folder: ``path``, or ``todeval_home()/memory_bank``."""
    return Path(path) if path is not None else todeval_home() / "memory_bank"


def collection_for(files: Sequence[Path]) -> str:
    """The bank collection of one or more benchmark files, named by their content.

    Unit ids repeat across benchmarks, so each benchmark gets its own collection; the same
    file gives the same name wherever it is evaluated (``memory eval`` or ``evaluate``).
    """
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.read_bytes())
    return f"memory_bank_{digest.hexdigest()[:12]}"


def unit_text(unit: MemoryUnit) -> str:
    """The text a unit is embedded and BM25-indexed as."""
    return f"{unit.intent_description} {unit.question} {unit.answer}"


def tokenize(text: str) -> list[str]:
    """BM25 tokens: lower-cased word characters."""
    return _TOKEN.findall(text.lower())


def min_max(scores: NDArray[np.float64]) -> NDArray[np.float64]:
    """Scale to [0, 1]; equal scores become 1 (or 0 when they are all 0)."""
    if scores.size == 0:
        return scores
    low, high = float(scores.min()), float(scores.max())
    if high - low <= 1e-12:
        return np.full_like(scores, 1.0 if high > 0 else 0.0)
    scaled: NDArray[np.float64] = (scores - low) / (high - low)
    return scaled


class _UserIndex:
    """One user's units, their vectors and their BM25 index; the sessions' intent keys."""

    def __init__(self, units: list[MemoryUnit], vectors: NDArray[np.float32]) -> None:
        self.units = units
        self.vectors = vectors
        self._bm25: BM25Okapi | None = None
        members: dict[str, list[int]] = {}
        keys: dict[str, str] = {}
        for position, unit in enumerate(units):
            members.setdefault(unit.session_id, []).append(position)
            keys.setdefault(unit.session_id, unit.intent_description)
        self.sessions = list(members)
        self.members = members
        self.keys = [keys[session] for session in self.sessions]
        self.key_vectors: NDArray[np.float32] | None = None
        self._key_bm25: BM25Okapi | None = None

    def bm25_scores(self, query: str) -> NDArray[np.float64]:
        if self._bm25 is None:
            self._bm25 = BM25Okapi([tokenize(unit_text(u)) or [""] for u in self.units])
        return np.asarray(self._bm25.get_scores(tokenize(query)), dtype=np.float64)

    def key_bm25_scores(self, query: str) -> NDArray[np.float64]:
        if self._key_bm25 is None:
            self._key_bm25 = BM25Okapi([tokenize(key) or [""] for key in self.keys])
        return np.asarray(self._key_bm25.get_scores(tokenize(query)), dtype=np.float64)


class MemoryBank:
    """Every user's QA memory units, persistent in Chroma or kept in process.

    ``path`` defaults to ``todeval_home()/memory_bank``; ``server`` (``http://host:port``)
    holds the collection instead of ``path``.

    Raises:
        ValueError: An unknown backend, a malformed server URL or a server that does not answer.
    """

    def __init__(
        self,
        path: Path | str | None = None,
        *,
        backend: Literal["chroma", "memory"] = "chroma",
        collection: str = DEFAULT_COLLECTION,
        embedder: Embedder | None = None,
        server: str | None = None,
    ) -> None:
        if backend not in ("chroma", "memory"):
            raise ValueError(f"unknown memory bank backend {backend!r}")
        self.backend = backend
        self._embedder = embedder
        self._lock = threading.Lock()
        self._users: dict[str, _UserIndex] = {}
        self._memory: dict[str, dict[str, tuple[MemoryUnit, NDArray[np.float32]]]] = {}
        self.collection: Collection | None = None
        if backend == "chroma":
            from todeval.stores.chroma import get_collection, server_client
        if backend == "chroma" and server is not None:
            self.collection = get_collection(collection, client=server_client(server))
        elif backend == "chroma":
            folder = bank_folder(path)
            self.collection = get_collection(collection, path=folder, embedder=None)

    @property
    def embedder(self) -> Embedder:
        """The embedder (the shared MiniLM unless one was given), loaded on first use."""
        if self._embedder is None:
            self._embedder = get_embedder()
        return self._embedder

    def add_units(self, units: Iterable[MemoryUnit]) -> int:
        """Store units; a unit whose ``unit_id`` is already stored is replaced.

        Returns:
            How many of the ids were not stored before.
        """
        batch = list({unit.unit_id: unit for unit in units}.values())
        if not batch:
            return 0
        texts = [unit_text(u) for u in batch]
        vectors = np.asarray(self.embedder.embed(texts), np.float32)
        ids = [unit.unit_id for unit in batch]
        with self._lock:
            if self.collection is not None:
                known = set(self.collection.get(ids=ids, include=[])["ids"])
                self.collection.upsert(
                    ids=ids,
                    embeddings=vectors,
                    documents=texts,
                    metadatas=[_metadata(u) for u in batch],
                )
            else:
                known = {
                    u.unit_id for u in batch if u.unit_id in self._memory.get(u.individual_id, {})
                }
                for unit, vector in zip(batch, vectors, strict=True):
                    self._memory.setdefault(unit.individual_id, {})[unit.unit_id] = (unit, vector)
            for user in {unit.individual_id for unit in batch}:
                self._users.pop(user, None)
        return len(set(ids) - known)

    def units(self, individual_id: str) -> list[MemoryUnit]:
        """A user's units, in ``unit_id`` order."""
        return list(self._user(individual_id).units)

    def count(self, individual_id: str | None = None) -> int:
        """Units stored for one user, or for everyone."""
        if individual_id is not None:
            return len(self._user(individual_id).units)
        if self.collection is not None:
            return int(self.collection.count())
        return sum(len(rows) for rows in self._memory.values())

    def search(
        self, individual_id: str, query: str, k: int, mode: RetrievalMode = "hybrid"
    ) -> list[tuple[MemoryUnit, float]]:
        """Memory activation: ``(unit, score in [0, 1])`` of a user's ``k`` best, best first.

        Ties keep ``unit_id`` order; other users' units are never returned.
        """
        if mode not in RETRIEVAL_MODES:
            raise ValueError(f"unknown retrieval mode {mode!r}; expected {RETRIEVAL_MODES}")
        index = self._user(individual_id)
        if not index.units or k <= 0:
            return []
        scores = self._scores(index, query, mode)
        order = np.argsort(-scores, kind="stable")[:k]
        return [(index.units[i], float(scores[i])) for i in order]

    def search_by_intent(
        self, individual_id: str, query: str, k: int, mode: RetrievalMode = "hybrid"
    ) -> list[tuple[MemoryUnit, float]]:
        """Intent-key activation: sessions ranked by their intent key k_j, then their units.

        MAP §4.2 compares the intent description k_i with each stored session's key k_j (the
        units' ``intent_description``) and activates the best sessions' QA units v_j. Each
        unit scores its session's (scaled) score; units follow their session's rank, in
        ``unit_id`` order within it, up to ``k`` units. ``query`` is k_i (or the dialogue
        context when no description was written).
        """
        if mode not in RETRIEVAL_MODES:
            raise ValueError(f"unknown retrieval mode {mode!r}; expected {RETRIEVAL_MODES}")
        index = self._user(individual_id)
        if not index.units or k <= 0:
            return []
        if index.key_vectors is None and mode != "bm25":
            index.key_vectors = np.asarray(self.embedder.embed(index.keys), np.float32)
        scores = self._combine(query, mode, index.key_vectors, lambda: index.key_bm25_scores(query))
        hits: list[tuple[MemoryUnit, float]] = []
        for i in np.argsort(-scores, kind="stable"):
            for position in index.members[index.sessions[i]]:
                hits.append((index.units[position], float(scores[i])))
        return hits[:k]

    def _scores(self, index: _UserIndex, query: str, mode: RetrievalMode) -> NDArray[np.float64]:
        """Scaled scores of every unit of ``index`` (see the module docstring)."""
        return self._combine(query, mode, index.vectors, lambda: index.bm25_scores(query))

    def _combine(
        self,
        query: str,
        mode: RetrievalMode,
        vectors: NDArray[np.float32] | None,
        bm25: Callable[[], NDArray[np.float64]],
    ) -> NDArray[np.float64]:
        """Dense cosine and/or BM25 over some rows, each min-max scaled, averaged."""
        parts: list[NDArray[np.float64]] = []
        if mode in ("dense", "hybrid"):
            assert vectors is not None
            vector = np.asarray(self.embedder.embed([query]), np.float32)[0]
            parts.append(min_max(cosine_matrix(vector, vectors)[0].astype(np.float64)))
        if mode in ("bm25", "hybrid"):
            parts.append(min_max(bm25()))
        combined: NDArray[np.float64] = np.mean(parts, axis=0)
        return combined

    def delete_individual(self, individual_id: str) -> None:
        """Forget every unit of one user."""
        with self._lock:
            if self.collection is not None:
                self.collection.delete(where={"user_id": individual_id})
            self._memory.pop(individual_id, None)
            self._users.pop(individual_id, None)

    def _user(self, individual_id: str) -> _UserIndex:
        with self._lock:
            index = self._users.get(individual_id)
            if index is None:
                index = self._load(individual_id)
                self._users[individual_id] = index
            return index

    def _load(self, individual_id: str) -> _UserIndex:
        if self.collection is None:
            rows = sorted(self._memory.get(individual_id, {}).values(), key=lambda r: r[0].unit_id)
            vectors = [vector for _, vector in rows]
            return _UserIndex([unit for unit, _ in rows], _stack(vectors))
        got = self.collection.get(
            where={"user_id": individual_id}, include=["metadatas", "embeddings"]
        )
        metadatas = got["metadatas"] or []
        embeddings = got["embeddings"] if got["embeddings"] is not None else []
        triples = sorted(zip(got["ids"], metadatas, embeddings, strict=True), key=lambda t: t[0])
        units = [_unit(unit_id, dict(meta)) for unit_id, meta, _ in triples]
        return _UserIndex(units, _stack([np.asarray(v, np.float32) for _, _, v in triples]))


def _stack(vectors: Sequence[NDArray[np.float32]]) -> NDArray[np.float32]:
    if not vectors:
        return np.zeros((0, 0), dtype=np.float32)
    return np.vstack(vectors).astype(np.float32)


def _metadata(unit: MemoryUnit) -> dict[str, str]:
    metadata = {"user_id": unit.individual_id, "session_id": unit.session_id, "intent": unit.intent}
    metadata.update(
        {f: str(getattr(unit, f)) for f in _UNIT_FIELDS if getattr(unit, f) is not None}
    )
    return metadata


def _unit(unit_id: str, metadata: dict[str, Any]) -> MemoryUnit:
    return MemoryUnit(
        unit_id=unit_id,
        individual_id=str(metadata["user_id"]),
        session_id=str(metadata["session_id"]),
        intent=str(metadata["intent"]),
        **{f: metadata.get(f) for f in _UNIT_FIELDS},
    )
