"""Gradient-boosted trees in plain numpy, for local judges trained on public data.

Trained with scikit-learn (``scripts/train_segmenter.py``) and exported as arrays, each tree
padded to a complete binary tree of one depth, so inference is vectorised per level: no
scikit-learn, no pickle. Node ``i`` has children ``2i+1`` (``x[feature] <= threshold``) and
``2i+2``; padding splits have threshold ``+inf``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from todeval.nodes.judges.vectors import FloatArray


@dataclass
class BoostedTrees:
    """``logit(x) = base + sum over trees of leaf(x)``, then a decision threshold.

    Arrays are per tree: ``feature``/``threshold`` over ``2**depth - 1`` internal nodes, ``leaf``
    over ``2**depth`` leaves (learning rate included).
    """

    feature: NDArray[np.int32]
    threshold: FloatArray
    leaf: FloatArray
    base: float
    threshold_probability: float = 0.5
    feature_names: tuple[str, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def depth(self) -> int:
        """Levels of internal nodes in every tree."""
        return int(self.leaf.shape[1]).bit_length() - 1  # 2**depth leaves

    def logits(self, rows: FloatArray) -> FloatArray:
        """Log-odds of a new goal for each row of ``rows`` (shape ``(n, features)``)."""
        rows = np.atleast_2d(rows)
        n_trees = self.feature.shape[0]
        tree_index = np.arange(n_trees)[None, :]
        if rows.shape[0] == 1:
            return self._logit_of_one(rows[0])
        node = np.zeros((rows.shape[0], n_trees), dtype=np.int64)
        row_index = np.arange(rows.shape[0])[:, None]
        for _ in range(self.depth):
            split = self.feature[tree_index, node]
            right = rows[row_index, split] > self.threshold[tree_index, node]
            node = 2 * node + 1 + right
        leaves = node - (self.leaf.shape[1] - 1)
        # One float32 sum per row over a (rows, trees) array; a single row sums its contiguous
        # leaf values in the same pairwise order (_logit_of_one).
        total = self.leaf[tree_index, leaves].sum(axis=1)
        return np.asarray(total + self.base, dtype=np.float32)

    def logit(self, row: FloatArray) -> float:
        """``logits`` of one row (shape ``(features,)``), as a float."""
        return float(self._logit_of_one(row)[0])

    def _logit_of_one(self, row: FloatArray) -> FloatArray:
        """``logits`` of one row, shape ``(1,)``: its leaf values gathered flat and summed."""
        leaf_values, first_leaf = self._flat_leaves
        total = leaf_values.take(first_leaf + self._leaves_of_one(row)).sum(keepdims=True)
        return np.asarray(total + self.base, dtype=np.float32)

    def _leaves_of_one(self, row: FloatArray) -> NDArray[np.int64]:
        """Each tree's leaf for one row: every split tested at once, then the paths read.

        The greedy decoder asks for one row at a time; the batch path's per-level 2-D
        gathers cost more than comparing all ``trees x nodes`` splits in one go. A tree's
        tests, read as a binary number (exact in float32: distinct powers of two below
        ``2**24``), index a table of the leaf their path ends in: one gather instead of one
        per level, for trees shallow enough for a table.
        """
        feature, threshold, first_node = self._flat_splits
        goes_right = row.take(feature) > threshold
        table = self._leaf_table
        if table is not None:
            internal = self.feature.shape[1]
            tests = goes_right.reshape(-1, internal).astype(np.float32)
            leaves: NDArray[np.int64] = table.take((tests @ self._bit_values).astype(np.intp))
            return leaves
        node = np.zeros(len(first_node), dtype=np.int64)
        for _ in range(self.depth):
            node = 2 * node + 1 + goes_right.take(first_node + node)
        leaves = node - (self.leaf.shape[1] - 1)
        return leaves

    @cached_property
    def _flat_splits(self) -> tuple[NDArray[np.intp], FloatArray, NDArray[np.int64]]:
        """Every tree's split features and thresholds end to end, and where each tree starts.

        Read from the arrays on first use: a model's arrays are not changed after loading.
        """
        internal = self.feature.shape[1]
        first_node = np.arange(self.feature.shape[0], dtype=np.int64) * internal
        return self.feature.astype(np.intp).ravel(), self.threshold.ravel(), first_node

    @cached_property
    def _bit_values(self) -> FloatArray:
        """Node ``i``'s test is bit ``i`` of a tree's code (``2.0**i``)."""
        return np.ldexp(np.float32(1.0), np.arange(self.feature.shape[1])).astype(np.float32)

    @cached_property
    def _flat_leaves(self) -> tuple[FloatArray, NDArray[np.int64]]:
        """Every tree's leaf values end to end, and where each tree's leaves start."""
        n_trees, n_leaves = self.leaf.shape
        return self.leaf.ravel(), np.arange(n_trees, dtype=np.int64) * n_leaves

    @cached_property
    def _leaf_table(self) -> NDArray[np.int64] | None:
        """The leaf of every code (``_bit_values``), or None for trees too deep for a table.

        Built by walking every code down the tree as :meth:`logits` walks a row.
        """
        internal = self.feature.shape[1]
        if internal > 16:  # depth 4 and less (a table of at most 65536 leaves)
            return None
        codes = np.arange(1 << internal, dtype=np.int64)
        node = np.zeros(len(codes), dtype=np.int64)
        for _ in range(self.depth):
            node = 2 * node + 1 + ((codes >> node) & 1)
        table: NDArray[np.int64] = node - (self.leaf.shape[1] - 1)
        return table

    def save(self, path: Path) -> None:
        """Write the arrays to ``path`` (.npz) and the rest to the ``.json`` beside it."""
        np.savez_compressed(
            path,
            feature=self.feature.astype(np.int16),
            threshold=self.threshold.astype(np.float32),
            leaf=self.leaf.astype(np.float32),
        )
        sidecar = {
            "threshold": self.threshold_probability,
            "base": self.base,
            "feature_names": list(self.feature_names),
            "metadata": self.metadata,
        }
        path.with_suffix(".json").write_text(json.dumps(sidecar, indent=2) + "\n")

    @classmethod
    def load(cls, path: Path) -> BoostedTrees:
        """Read a model written by :meth:`save`."""
        with np.load(path) as arrays:
            feature = arrays["feature"].astype(np.int32)
            threshold = arrays["threshold"].astype(np.float32)
            leaf = arrays["leaf"].astype(np.float32)
        sidecar = json.loads(path.with_suffix(".json").read_text())
        return cls(
            feature=feature,
            threshold=threshold,
            leaf=leaf,
            base=float(sidecar["base"]),
            threshold_probability=float(sidecar["threshold"]),
            feature_names=tuple(sidecar["feature_names"]),
            metadata=sidecar["metadata"],
        )


def complete_tree(
    children_left: NDArray[np.int64],
    children_right: NDArray[np.int64],
    features: NDArray[np.int64],
    thresholds: NDArray[np.float64],
    values: NDArray[np.float64],
    depth: int,
) -> tuple[NDArray[np.int32], FloatArray, FloatArray]:
    """One tree in scikit-learn's node-list form (``tree_.*``) as a complete ``depth``-level tree.

    Returns ``(feature, threshold, leaf)``; raises ValueError if the tree is deeper than ``depth``.
    """
    feature = np.zeros(2**depth - 1, dtype=np.int32)
    threshold = np.full(2**depth - 1, np.inf, dtype=np.float32)
    leaf = np.zeros(2**depth, dtype=np.float32)

    def fill(node: int, position: int, level: int) -> None:
        if children_left[node] == -1:
            first = position
            for _ in range(depth - level):
                first = 2 * first + 1
            width = 2 ** (depth - level)
            start = first - (2**depth - 1)
            leaf[start : start + width] = values[node]
            return
        if level >= depth:
            raise ValueError(f"tree deeper than {depth}")
        feature[position] = features[node]
        threshold[position] = thresholds[node]
        fill(int(children_left[node]), 2 * position + 1, level + 1)
        fill(int(children_right[node]), 2 * position + 2, level + 1)

    fill(0, 0, 0)
    return feature, threshold, leaf
