"""Metric validity (ATOD, paper 000, §8.3, Table 5): each metric's correlation with dGCR.

Over the dialogues where both a metric and dGCR are defined, Pearson's r and Spearman's rho
(Pearson's r of the ranks, ties given their average rank). With fewer than three such dialogues,
or a metric (or dGCR) that does not vary over them, a correlation is undefined: None with the
reason, never a made-up 0.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from todeval.evals.metrics.goal_tracking.goal_records import round4

VALIDITY_METRICS = (
    "ntc", "memory_recall_accuracy", "proactivity_effectiveness", "turn_quality",
    "dialogue_quality",
)  # fmt: skip
"""Table 5's metrics, as a tracker run measures them per dialogue (quality needs an LLM)."""

MIN_DIALOGUES = 3


def pearson(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Pearson's r; None when fewer than two values or either side is constant."""
    if len(x) != len(y) or len(x) < 2:
        return None
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    a, b = a - a.mean(), b - b.mean()
    scale = float(np.sqrt((a * a).sum() * (b * b).sum()))
    return None if scale == 0.0 else float((a * b).sum() / scale)


def ranks(values: Sequence[float]) -> list[float]:
    """1-based ranks, ties sharing their average rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for position in range(start, end + 1):
            out[order[position]] = (start + end) / 2 + 1
        start = end + 1
    return out


def spearman(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Spearman's rho: Pearson's r of the ranks."""
    return pearson(ranks(x), ranks(y))


def metric_validity(
    rows: Iterable[Mapping[str, Any]], metrics: Sequence[str] = VALIDITY_METRICS
) -> dict[str, dict[str, Any]]:
    """Per metric: ``{"pearson", "spearman", "n_dialogues", "reason"}`` against ``dgcr``."""
    counts = ValidityCounts(tuple(metrics))
    for row in rows:
        counts.add(row)
    return counts.report()


@dataclass
class ValidityCounts:
    """:func:`metric_validity` one dialogue at a time: how often each (metric, dGCR) pair came.

    Per-dialogue figures are ratios of small counts, so the distinct pairs are few however
    many dialogues there are; the correlations are computed from them (the pairs in sorted
    order, each as often as it came) when asked.
    """

    metrics: tuple[str, ...] = VALIDITY_METRICS
    pairs: dict[str, Counter[tuple[float, float]]] = field(default_factory=dict)

    def add(self, row: Mapping[str, Any]) -> None:
        """Count one dialogue's figures (a row of the tally: unrounded)."""
        if row.get("dgcr") is None:
            return
        for name in self.metrics:
            if row.get(name) is not None:
                pair = (float(row[name]), float(row["dgcr"]))
                self.pairs.setdefault(name, Counter())[pair] += 1

    def merge(self, other: ValidityCounts) -> None:
        """Add the dialogues ``other`` counted."""
        for name, pairs in other.pairs.items():
            self.pairs.setdefault(name, Counter()).update(pairs)

    def report(self) -> dict[str, dict[str, Any]]:
        """:func:`metric_validity` of the dialogues counted."""
        out = {}
        for name in self.metrics:
            pairs = sorted((self.pairs.get(name) or Counter()).elements())
            x, y = [p[0] for p in pairs], [p[1] for p in pairs]
            r, rho = pearson(x, y), spearman(x, y)
            reason = None
            if len(pairs) < MIN_DIALOGUES:
                r = rho = None
                reason = f"{len(pairs)} dialogues have both {name} and dGCR; need {MIN_DIALOGUES}"
            elif r is None:
                reason = f"{name} or dGCR is the same in every dialogue"
            out[name] = {
                "pearson": round4(r),
                "spearman": round4(rho),
                "n_dialogues": len(pairs),
                "reason": reason,
            }
        return out
