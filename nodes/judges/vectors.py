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

    The table is one array (a row per text) and each text's row number: rows kept from the
    last chunk are copied into the new array, not viewed, since a view keeps its whole array
    alive. With views, a stock phrase in consecutive chunks held up to three chunks' arrays
    per table (about 4 MB on long SGD dev chunks, the largest part of a run's growth).
    """

    def __init__(self, embed: Embed | None = None) -> None:
        self._embed = embed
        self._table: tuple[dict[str, int], FloatArray] = ({}, _no_rows())

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
        rows, array = self._table  # one reference: a concurrent load() swaps, never mutates
        if unique == list(rows):
            return
        missing = [text for text in unique if text not in rows]
        fresh = self.embed(missing) if missing else _no_rows()
        at = {text: row for row, text in enumerate(unique)}
        if len(missing) < len(unique):
            table = np.empty((len(unique), array.shape[1]), np.result_type(array, fresh))
            kept = [text for text in unique if text in rows]
            table[[at[text] for text in kept]] = array[[rows[text] for text in kept]]
            table[[at[text] for text in missing]] = fresh
            fresh = table
        self._table = (at, fresh)

    def get(self, texts: Sequence[str]) -> FloatArray:
        """Vectors for ``texts``, shape ``(len(texts), dim)``, from the table where possible."""
        rows, array = self._table  # one reference: a concurrent load() swaps, never mutates
        if not texts:
            return _no_rows()
        missing = list(dict.fromkeys(t for t in texts if t not in rows))
        if not missing:
            return array[[rows[t] for t in texts]]
        found = dict(zip(missing, self.embed(missing), strict=True))
        return np.stack([array[rows[t]] if t in rows else found[t] for t in texts])


def _no_rows() -> FloatArray:
    return np.zeros((0, 384), np.float32)


@functools.cache
def minilm_table() -> VectorTable:
    """The MiniLM vector table the local judges share (one per process).

    The segmenter and the learned teachers embed the same messages of a chunk: whichever
    loads the chunk first embeds it, the others find it there.
    """
    return VectorTable()
