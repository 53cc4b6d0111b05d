"""D_vec: the semantic index of goal descriptions, in Chroma or in process (numpy cosine).

Both backends receive vectors the goal memory computed (unit length), so an injected embedding
function is honoured by either. Chroma holds one collection for every dialogue, each vector
tagged with ``dialogue_id``, ``goal_id`` and ``status``; queries filter on the dialogue with
``where``. The in-process backend ranks the embeddings D_sym keeps with each goal row.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from todeval.stores.embeddings import cosine_matrix
from todeval.stores.goal_memory.records import Goal

if TYPE_CHECKING:  # chromadb takes about 0.4 s to import: only a Chroma-backed D_vec needs it
    from chromadb.api import ClientAPI
    from chromadb.api.models.Collection import Collection

DEFAULT_COLLECTION = "goal_memory"


def vector_id(dialogue_id: str, goal_id: str) -> str:
    """The Chroma id of a goal: unambiguous for any dialogue id (a JSON pair)."""
    return json.dumps([dialogue_id, goal_id])


def _metadata(goal: Goal) -> dict[str, str | int | float | bool | None]:
    return {"dialogue_id": goal.dialogue_id, "goal_id": goal.id, "status": goal.status}


def _where(dialogue_id: str, statuses: Sequence[str] | None) -> dict[str, Any]:
    if statuses is None:
        return {"dialogue_id": dialogue_id}
    return {"$and": [{"dialogue_id": dialogue_id}, {"status": {"$in": list(statuses)}}]}


class ChromaGoalIndex:
    """Goal description vectors in one Chroma collection (cosine space).

    Args:
        name: Collection name (3-512 characters of ``[a-zA-Z0-9._-]``).
        client: A Chroma client: persistent, ephemeral or HTTP.
        owned: The collection belongs to this index alone (:meth:`drop` it when done).
    """

    def __init__(self, name: str, client: ClientAPI, *, owned: bool = False) -> None:
        self.name = name
        self.client = client
        self.owned = owned
        from todeval.stores.chroma import get_collection

        self.collection: Collection = get_collection(name, client=client)

    @classmethod
    def open(
        cls,
        name: str | None = None,
        *,
        path: Path | str | None = None,
        client: ClientAPI | None = None,
        ephemeral: bool = False,
    ) -> ChromaGoalIndex:
        """Open the index: on disk by default, in process when ``ephemeral``.

        Args:
            name: Collection name; default ``goal_memory``, or a fresh owned name when
                ``ephemeral`` (ephemeral clients share one store per process).
            path: Folder of a persistent store; default ``todeval_home()/chroma``.
            client: A client instead of ``path``.
            ephemeral: Keep vectors in process memory unless ``path`` or ``client`` is given.
        """
        if client is None:
            import chromadb

            from todeval.stores.chroma import chroma_settings, persistent_client

            in_process = ephemeral and path is None
            client = (
                chromadb.EphemeralClient(settings=chroma_settings())
                if in_process
                else persistent_client(path)
            )
        if name is None and ephemeral:
            return cls(f"goal-memory-{uuid.uuid4().hex}", client, owned=True)
        return cls(name or DEFAULT_COLLECTION, client)

    def upsert(self, goals: Sequence[Goal], vectors: NDArray[np.float32]) -> None:
        """Add (or replace) the vectors of ``goals``, row i for goal i."""
        if not goals:
            return
        self.collection.upsert(
            ids=[vector_id(goal.dialogue_id, goal.id) for goal in goals],
            embeddings=np.asarray(vectors, dtype=np.float32),
            metadatas=[_metadata(goal) for goal in goals],
            documents=[goal.description for goal in goals],
        )

    def set_status(self, goal: Goal) -> None:
        """Refresh a goal's ``status`` metadata."""
        self.collection.update(
            ids=[vector_id(goal.dialogue_id, goal.id)], metadatas=[_metadata(goal)]
        )

    def query(
        self,
        dialogue_id: str,
        vector: NDArray[np.float32],
        k: int,
        statuses: Sequence[str] | None = None,
    ) -> list[tuple[str, float]]:
        """The ``k`` nearest goals of one dialogue: ``(goal_id, cosine similarity)``, best first."""
        if k <= 0:
            return []
        result = self.collection.query(
            query_embeddings=np.asarray(vector, dtype=np.float32)[None, :],
            n_results=k,
            where=_where(dialogue_id, statuses),
            include=["metadatas", "distances"],
        )
        metadatas = (result["metadatas"] or [[]])[0]
        distances = (result["distances"] or [[]])[0]
        return [
            (str(metadata["goal_id"]), 1.0 - float(distance))
            for metadata, distance in zip(metadatas, distances, strict=True)
            if metadata["dialogue_id"] == dialogue_id  # the filter's guarantee, checked
        ]

    def delete_dialogue(self, dialogue_id: str) -> None:
        """Remove every vector of a dialogue."""
        self.collection.delete(where={"dialogue_id": dialogue_id})

    def count(self) -> int:
        """Vectors in the collection (all dialogues)."""
        return int(self.collection.count())

    def drop(self) -> None:
        """Delete the whole collection."""
        self.client.delete_collection(self.name)


def unit_rows(vectors: ArrayLike, n_texts: int) -> NDArray[np.float32]:
    """``vectors`` as float32 rows of unit length (cosine = dot product).

    Raises:
        ValueError: Not one row per text.
    """
    matrix = np.asarray(vectors, dtype=np.float32)
    if matrix.ndim != 2 or matrix.shape[0] != n_texts:
        raise ValueError(f"embed returned shape {matrix.shape} for {n_texts} texts")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    unit: NDArray[np.float32] = matrix / np.maximum(norms, 1e-12)
    return unit


def rank_by_cosine(
    goal_ids: Sequence[str], matrix: NDArray[np.float32], vector: NDArray[np.float32], k: int
) -> list[tuple[str, float]]:
    """The in-process backend: the ``k`` goals whose unit vectors are nearest ``vector``.

    Args:
        goal_ids: Candidate goals, row i of ``matrix`` for goal i.
        matrix: Their unit-length embeddings, shape (n, dim).
        vector: The unit-length query embedding, shape (dim,).
        k: How many to return at most.

    Returns:
        ``(goal_id, cosine similarity)`` best first; ties keep insertion order.
    """
    if not goal_ids or k <= 0:
        return []
    similarities = cosine_matrix(vector, matrix)[0]
    order = np.argsort(-similarities, kind="stable")[:k]
    return [(goal_ids[i], float(similarities[i])) for i in order]
