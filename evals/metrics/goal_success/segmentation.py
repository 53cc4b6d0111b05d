"""Goal-segmentation metrics (paper 004, Section 4.1): boundary P/R/F1, exact match, Pk, WindowDiff.

A segmentation is a dialogue's ``is_new_goal`` labels for turns 1..N; turn 1 starts a goal by
definition, so its label is ignored everywhere. Gap i (i = 1..N-1) holds a boundary when turn
i+1 is a new goal; a window of size k spans gaps i..i+k-1, for i = 1..N-k.

- Pk (Beeferman, Berger and Lafferty, 1999): the share of windows where gold and prediction
  disagree on whether turns i and i+k are in the same goal.
- WindowDiff (Pevzner and Hearst, 2002): the share where they count different boundaries.

Both equal NLTK's ``pk`` and ``windowdiff``. The default k is half the mean gold goal length,
rounded half up, at least 1; a k not below N is lowered to N-1. With N < 2 both are ``None``,
as are P/R/F1 over a zero denominator: no score is made up.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class PRF:
    """Precision, recall and F1 of predicted goal boundaries (turns 2..N), with their counts.

    ``None`` where the denominator is 0.
    """

    precision: float | None
    recall: float | None
    f1: float | None
    tp: int
    fp: int
    fn: int


def boundary_prf(gold: Sequence[bool], pred: Sequence[bool]) -> PRF:
    """Precision, recall and F1 of new-goal predictions over turns 2..N.

    Raises:
        ValueError: ``gold`` and ``pred`` differ in length.
    """
    gold_gaps, pred_gaps = _gaps(gold, pred)
    tp = sum(g and p for g, p in zip(gold_gaps, pred_gaps, strict=True))
    return prf_from_counts(tp, sum(pred_gaps) - tp, sum(gold_gaps) - tp)


def prf_from_counts(tp: int, fp: int, fn: int) -> PRF:
    """Precision, recall and F1 from counts, ``None`` where a denominator is 0."""
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    if precision is None or recall is None:
        f1 = None
    else:
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return PRF(precision=precision, recall=recall, f1=f1, tp=tp, fp=fp, fn=fn)


def exact_segmentation(gold: Sequence[bool], pred: Sequence[bool]) -> bool:
    """Whether the prediction splits the dialogue into exactly the gold goals.

    Raises:
        ValueError: ``gold`` and ``pred`` differ in length.
    """
    gold_gaps, pred_gaps = _gaps(gold, pred)
    return gold_gaps == pred_gaps


def pk(gold: Sequence[bool], pred: Sequence[bool], k: int | None = None) -> float | None:
    """Pk segmentation error (Beeferman et al., 1999); ``None`` under two turns.

    ``k`` defaults to half the mean gold goal length (module doc).

    Raises:
        ValueError: The lengths differ or ``k`` is below 1.
    """
    return _windowed(gold, pred, k, lambda g, p: (g > 0) != (p > 0))


def window_diff(gold: Sequence[bool], pred: Sequence[bool], k: int | None = None) -> float | None:
    """WindowDiff segmentation error (Pevzner and Hearst, 2002); ``None`` under two turns.

    ``k`` defaults to half the mean gold goal length (module doc).

    Raises:
        ValueError: The lengths differ or ``k`` is below 1.
    """
    return _windowed(gold, pred, k, lambda g, p: g != p)


def default_window(gold: Sequence[bool]) -> int:
    """Half the mean gold goal length in turns, rounded half up, at least 1."""
    goals = len(goal_spans(gold))
    if not goals:
        return 1
    return max(1, math.floor(len(gold) / goals / 2 + 0.5))


def goal_spans(labels: Sequence[bool]) -> list[tuple[int, int]]:
    """The goals as 1-based inclusive ``(start_turn, end_turn)`` spans; turn 1 always starts one."""
    if not labels:
        return []
    starts = [1] + [turn for turn in range(2, len(labels) + 1) if labels[turn - 1]]
    ends = [start - 1 for start in starts[1:]] + [len(labels)]
    return list(zip(starts, ends, strict=True))


def segmentation_report(
    pairs: Iterable[tuple[Sequence[bool], Sequence[bool]]],
) -> dict[str, Any]:
    """Corpus-level segmentation scores over ``(gold, pred)`` pairs, one per dialogue.

    P/R/F1 are micro-averaged over turns 2..N; ``pk`` and ``window_diff`` are means over the
    ``n_windowed_dialogues`` where they are defined, each with its default k.

    Raises:
        ValueError: A pair's gold and prediction differ in length.
    """
    tp = fp = fn = n_dialogues = n_turns = n_exact = 0
    pks: list[float] = []
    window_diffs: list[float] = []
    for gold, pred in pairs:
        scores = boundary_prf(gold, pred)
        tp, fp, fn = tp + scores.tp, fp + scores.fp, fn + scores.fn
        n_dialogues += 1
        n_turns += len(gold)
        n_exact += exact_segmentation(gold, pred)
        _append_defined(pks, pk(gold, pred))
        _append_defined(window_diffs, window_diff(gold, pred))
    micro = prf_from_counts(tp, fp, fn)
    return {
        "precision": micro.precision,
        "recall": micro.recall,
        "f1": micro.f1,
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "exact_segmentation_rate": n_exact / n_dialogues if n_dialogues else None,
        "pk": _mean(pks),
        "window_diff": _mean(window_diffs),
        "n_windowed_dialogues": len(pks),
        "n_dialogues": n_dialogues,
        "n_turns": n_turns,
    }


def _gaps(gold: Sequence[bool], pred: Sequence[bool]) -> tuple[list[bool], list[bool]]:
    """Boundary flags of gaps 1..N-1 (is turn i+1 a new goal?) of gold and prediction."""
    if len(gold) != len(pred):
        raise ValueError(f"gold has {len(gold)} turns but the prediction has {len(pred)}")
    return [bool(label) for label in gold[1:]], [bool(label) for label in pred[1:]]


def _windowed(
    gold: Sequence[bool],
    pred: Sequence[bool],
    k: int | None,
    differs: Callable[[int, int], bool],
) -> float | None:
    """Share of the N-k windows where ``differs(gold_count, pred_count)`` holds."""
    gold_gaps, pred_gaps = _gaps(gold, pred)
    if k is not None and k < 1:
        raise ValueError(f"window size k must be at least 1, got {k}")
    if len(gold) < 2:
        return None
    size = min(default_window(gold) if k is None else k, len(gold) - 1)
    windows = len(gold) - size
    errors = sum(
        differs(sum(gold_gaps[i : i + size]), sum(pred_gaps[i : i + size])) for i in range(windows)
    )
    return errors / windows


def _append_defined(values: list[float], value: float | None) -> None:
    if value is not None:
        values.append(value)


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None
