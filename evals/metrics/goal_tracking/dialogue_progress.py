"""Goal tracking against normalised dialogue progress (ATOD, paper 000, Section 7 and Fig. 3).

Detection F1 and status tracking accuracy scored at points through each dialogue, for online
evaluation, and pooled over dialogues into a corpus curve.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from todeval.evals.goal_tracking_schema import AtodTurn
from todeval.evals.metrics.goal_tracking.goal_detection import (
    check_one_to_one,
    detection_scores,
    status_hits,
)
from todeval.evals.metrics.goal_tracking.goal_records import (
    GoalRecord,
    GoldTimeline,
    Pair,
    is_mentioned,
    predicted_states_at_turns,
    ratio,
    round4,
)

PairsAt = Callable[[int], Sequence[Pair]] | Mapping[int, Sequence[Pair]]


def progress_curve(
    pred_turn_states: Sequence[GoalRecord],
    gold_turns: Sequence[AtodTurn],
    pairs_at: PairsAt,
    bins: int = 10,
) -> list[dict[str, Any]]:
    """Detection F1 and status accuracy against normalised dialogue progress (Fig. 3).

    For p = k / bins the state after utterance t = ceil(p * T) is scored (T gold utterances),
    in integer arithmetic: 9/11 of 77 is 63, where the float ``ceil(9 / 11 * 77)`` gives 64
    (:func:`progress_turns`). The tracker's state at t is its last record at or before t;
    gold goals count once mentioned. Pairs naming a goal absent at t are ignored, so one
    whole-dialogue matching may serve every t (:func:`goal_tracking_report` re-matches at each
    t). Each point carries the counts :func:`pool_progress_curves` adds up.

    Raises:
        ValueError: ``bins`` is below 1, there are no gold utterances, or pairs at a point are
            not one-to-one.
    """
    points = progress_counts(pred_turn_states, gold_turns, pairs_at, bins)
    return [
        {"progress": progress, "turn": turn} | _curve_point(counts)
        for progress, turn, counts in points
    ]


ProgressCounts = tuple[float, int, dict[str, int]]
"""A point of a progress curve before its rates: ``(progress, turn, counts)`` (:data:`COUNTS`)."""


def progress_counts(
    pred_turn_states: Sequence[GoalRecord],
    gold_turns: Sequence[AtodTurn],
    pairs_at: PairsAt,
    bins: int = 10,
    timeline: GoldTimeline | None = None,
    held: Mapping[int, Mapping[str, str]] | None = None,
) -> list[ProgressCounts]:
    """The counts of :func:`progress_curve`'s points (what :class:`CurveCounts` pools).

    A caller that already has the gold's ``timeline``, or the tracker's states ``held`` at
    every scored utterance, passes them instead of having them worked out again.

    Raises:
        ValueError: As :func:`progress_curve`.
    """
    if bins < 1 or not gold_turns:
        raise ValueError(f"need bins >= 1 and gold utterances, got {bins} and {len(gold_turns)}")
    timeline = timeline or GoldTimeline.of(gold_turns)  # the gold's, if the caller has it
    turns = progress_turns(len(gold_turns), bins)
    if held is None:
        held = predicted_states_at_turns(pred_turn_states, turns)
    pairs_of = pairs_at.__getitem__ if isinstance(pairs_at, Mapping) else pairs_at
    points = []
    grid = progress_grid(bins)
    scored: dict[int, dict[str, int]] = {}  # a short dialogue scores an utterance at 2-3 points
    for k, turn in enumerate(turns, start=1):
        if turn not in scored:
            pred = held[turn]
            gold = {g: s for g, s in timeline.view(turn).items() if is_mentioned(s)}
            pairs = [(p, g) for p, g in pairs_of(turn) if p in pred and g in gold]
            check_one_to_one(pairs)
            scored[turn] = {
                "n_gold": len(gold),
                "n_pred": len(pred),
                "n_matched": len(pairs),
                "n_status_correct": status_hits(pairs, pred, gold),
            }
        points.append((grid[k - 1], turn, dict(scored[turn])))
    return points


@cache
def progress_grid(bins: int) -> tuple[float, ...]:
    """The progress of each point, k / bins rounded to 4 decimals (every dialogue has them)."""
    return tuple(round(k / bins, 4) for k in range(1, bins + 1))


def progress_turns(utterances: int, bins: int = 10) -> list[int]:
    """The utterances :func:`progress_curve` scores: ceil(k / bins * utterances), k = 1..bins."""
    return [-(-k * utterances // bins) for k in range(1, bins + 1)]


def pool_progress_curves(curves: Iterable[Sequence[Mapping[str, Any]]]) -> list[dict[str, Any]]:
    """A corpus curve: counts summed over dialogues point by point, then rates recomputed.

    Pooling, not averaging ratios: a dialogue weighs by its goals, and one with no goal yet at
    a point adds nothing there. Empty for no curves.

    Raises:
        ValueError: The curves have different progress points.
    """
    counts = CurveCounts()
    for curve in curves:
        counts.add(curve)
    return counts.report()


COUNTS = ("n_gold", "n_pred", "n_matched", "n_status_correct")
"""What a curve point counts, summed point by point over dialogues."""


@dataclass
class CurveCounts:
    """:func:`pool_progress_curves` one curve at a time: the counts summed per point."""

    grid: tuple[Any, ...] | None = None
    """The progress points of the first curve."""
    mismatched: bool = False
    """A curve had other progress points (such curves cannot be pooled)."""
    sums: list[dict[str, int]] = field(default_factory=list)
    n_dialogues: int = 0

    def add(self, curve: Sequence[Mapping[str, Any]]) -> None:
        """Add one dialogue's curve (:func:`progress_curve`)."""
        grid = tuple(point["progress"] for point in curve)
        self.add_counts(grid, [{name: int(point[name]) for name in COUNTS} for point in curve])

    def add_counts(self, grid: tuple[Any, ...], counts: Sequence[Mapping[str, int]]) -> None:
        """Add one dialogue's curve as its progress points and their counts."""
        if self.grid is None:
            self.grid, self.sums = grid, [dict.fromkeys(COUNTS, 0) for _ in grid]
        if grid != self.grid:
            self.mismatched = True
            return
        for sums, theirs in zip(self.sums, counts, strict=True):
            for name in COUNTS:
                sums[name] += theirs[name]
        self.n_dialogues += 1

    def merge(self, other: CurveCounts) -> None:
        """Add the curves ``other`` pooled."""
        self.mismatched |= other.mismatched
        if other.grid is None:
            return
        if self.grid is None:
            self.grid, self.sums = other.grid, [dict.fromkeys(COUNTS, 0) for _ in other.grid]
        if other.grid != self.grid:
            self.mismatched = True
            return
        for sums, theirs in zip(self.sums, other.sums, strict=True):
            for name in COUNTS:
                sums[name] += theirs[name]
        self.n_dialogues += other.n_dialogues

    def report(self) -> list[dict[str, Any]]:
        """:func:`pool_progress_curves` of the curves added.

        Raises:
            ValueError: The curves have different progress points.
        """
        if self.mismatched:
            raise ValueError("every curve must have the same progress points (same bins)")
        return [
            {"progress": progress} | _curve_point(sums) | {"n_dialogues": self.n_dialogues}
            for progress, sums in zip(self.grid or (), self.sums, strict=True)
        ]


def _curve_point(counts: Mapping[str, int]) -> dict[str, Any]:
    f1 = detection_scores(counts["n_matched"], counts["n_pred"], counts["n_gold"])["f1"]
    accuracy = ratio(counts["n_status_correct"], counts["n_matched"])
    return {"detection_f1": round4(f1), "status_accuracy": round4(accuracy)} | dict(counts)
