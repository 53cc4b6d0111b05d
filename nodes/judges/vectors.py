"""Precomputed MiniLM vectors for the local ``turn_quality`` teachers."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float32]
Embed = Callable[[Sequence[str]], FloatArray]
"""A sentence-embedding function: texts in, one L2-normalised row per text out."""


class VectorTable:
    """MiniLM vectors of a chunk's texts, embedded in one batch by a teacher's ``prepare``.

    An unprepared text is embedded on the spot; each :meth:`load` replaces the table, so memory
    stays bounded by one chunk. ``embed`` defaults to MiniLM, loaded on first use.
    """

    def __init__(self, embed: Embed | None = None) -> None:
        self._embed = embed
        self._table: dict[str, FloatArray] = {}

    @property
    def source(self) -> Embed:
        """The embedding function (MiniLM's, loaded now, when none was given)."""
        if self._embed is None:
            from todeval.stores.embeddings import get_embedder

            self._embed = get_embedder().embed
        return self._embed

    def embed(self, texts: list[str]) -> FloatArray:
        """Embed ``texts`` with the configured function (rows L2-normalised)."""
        return self.source(texts)

    def load(self, texts: Iterable[str]) -> None:
        """Embed the distinct ``texts`` in one batch and keep them as the current table.

        Judges that share a table each load the same chunk: the second load finds it there.
        """
        unique = list(dict.fromkeys(texts))
        if unique == list(self._table):
            return
        vectors = self.embed(unique) if unique else np.zeros((0, 384), np.float32)
        self._table = dict(zip(unique, vectors, strict=True))

    def get(self, texts: list[str]) -> FloatArray:
        """Vectors for ``texts``, shape ``(len(texts), dim)``, from the table where possible."""
        table = self._table  # one reference: a concurrent load() swaps, never mutates
        missing = list(dict.fromkeys(t for t in texts if t not in table))
        found = dict(zip(missing, self.embed(missing), strict=True)) if missing else {}
        rows = [table[t] if t in table else found[t] for t in texts]
        return np.stack(rows) if rows else np.zeros((0, 384), np.float32)
