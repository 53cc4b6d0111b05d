"""Precomputed MiniLM vectors for the local ``turn_quality`` teachers."""

from __future__ import annotations

import functools
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

        Judges that share a table each load the same chunk: the second load finds it there
        (a text already in the table keeps its vector; only the others are embedded).
        """
        unique = list(dict.fromkeys(texts))
        table = self._table  # one reference: a concurrent load() swaps, never mutates
        if unique == list(table):
            return
        missing = [text for text in unique if text not in table]
        vectors = self.embed(missing) if missing else np.zeros((0, 384), np.float32)
        fresh = dict(zip(missing, vectors, strict=True))
        self._table = {text: table[text] if text in table else fresh[text] for text in unique}

    def get(self, texts: Sequence[str]) -> FloatArray:
        """Vectors for ``texts``, shape ``(len(texts), dim)``, from the table where possible."""
        table = self._table  # one reference: a concurrent load() swaps, never mutates
        missing = list(dict.fromkeys(t for t in texts if t not in table))
        found = dict(zip(missing, self.embed(missing), strict=True)) if missing else {}
        rows = [table[t] if t in table else found[t] for t in texts]
        return np.stack(rows) if rows else np.zeros((0, 384), np.float32)


@functools.cache
def minilm_table() -> VectorTable:
    """The MiniLM vector table the local judges share (one per process).

    The segmenter and the learned teachers embed the same messages of a chunk: whichever
    loads the chunk first embeds it, the others find it there.
    """
    return VectorTable()
