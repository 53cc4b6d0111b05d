"""Status accuracy on dialogue-confirmed goals: the outcomes a dialogue reports itself.

The status accuracy of :mod:`evals.metrics.goal_tracking.goal_detection` compares with derived
gold statuses and counts detected goals only. This asks a question with an unarguable answer:
for every gold goal whose outcome the dialogue states (SGD's ``NOTIFY_SUCCESS`` /
``NOTIFY_FAILURE``, the gold goal's ``confirmed``), does the tracker end with that status? A
goal the tracker never detected counts as wrong (``undetected``); completed and failed goals
are counted apart, each with the tracker's final statuses.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from todeval.evals.goal_tracking_schema import AtodDialogue, AtodGoal
from todeval.evals.metrics.goal_tracking.goal_records import Pair, canonical_status, ratio, round4

CONFIRMED_OUTCOMES = ("completed", "failed")
"""The outcomes a dialogue can confirm, in report order."""

UNDETECTED = "undetected"
"""The breakdown's name for a confirmed goal no tracked goal was paired with."""

FINAL_STATUSES = ("completed", "pending", "abandoned", "open", "failed", UNDETECTED)
"""The breakdown's columns, in the issue's order."""


def confirmed_outcome(goal: AtodGoal) -> str | None:
    """The outcome the dialogue confirms for a gold goal (``completed``/``failed``), or None."""
    status = canonical_status(goal.confirmed)
    return status if status in CONFIRMED_OUTCOMES else None


def confirmed_status_counts(
    pairs: Sequence[Pair], pred_status: Mapping[str, Any], gold: AtodDialogue
) -> Counter[str]:
    """One dialogue's confirmed goals, counted by ``"<outcome>:<final status>"``.

    ``pairs`` are the ``(predicted id, gold id)`` matches at the end of the dialogue; a gold
    goal paired with none is ``undetected``.

    Raises:
        ValueError: A pair names a predicted goal missing from ``pred_status``.
    """
    by_gold = {gold_id: pred_id for pred_id, gold_id in pairs}
    counts: Counter[str] = Counter()
    for goal in gold.goal_list:
        outcome = confirmed_outcome(goal)
        if outcome is None:
            continue
        pred_id = by_gold.get(goal.id)
        if pred_id is None:
            final = UNDETECTED
        elif pred_id not in pred_status:
            raise ValueError(f"no status for matched goal {pred_id}")
        else:
            final = canonical_status(pred_status[pred_id]) or UNDETECTED
        counts[f"{outcome}:{final}"] += 1
    return counts


def confirmed_correct(counts: Mapping[str, int]) -> int:
    """How many confirmed goals of :func:`confirmed_status_counts` end with their outcome."""
    return sum(n for key, n in counts.items() if key.split(":")[0] == key.split(":")[-1])


def confirmed_row(counts: Counter[str]) -> dict[str, int]:
    """A dialogue row's counts behind the figure: ``confirmed``, ``confirmed_correct`` (or {})."""
    if not counts:
        return {}
    return {"confirmed": counts.total(), "confirmed_correct": confirmed_correct(counts)}


def confirmed_status_report(counts: Mapping[str, int]) -> dict[str, Any]:
    """The figures of pooled :func:`confirmed_status_counts`; rates rounded, None over nothing.

    Undetected goals count wrong in ``confirmed_status_accuracy``, not in
    ``confirmed_status_accuracy_detected``.
    """
    breakdown = {
        outcome: {final: int(counts.get(f"{outcome}:{final}", 0)) for final in FINAL_STATUSES}
        for outcome in CONFIRMED_OUTCOMES
    }
    totals = {outcome: sum(row.values()) for outcome, row in breakdown.items()}
    right = {outcome: breakdown[outcome][outcome] for outcome in CONFIRMED_OUTCOMES}
    undetected = sum(row[UNDETECTED] for row in breakdown.values())
    n = sum(totals.values())
    return {
        "confirmed_status_accuracy": round4(ratio(sum(right.values()), n)),
        "confirmed_status_accuracy_detected": round4(ratio(sum(right.values()), n - undetected)),
        "confirmed_completed_accuracy": round4(ratio(right["completed"], totals["completed"])),
        "confirmed_failed_accuracy": round4(ratio(right["failed"], totals["failed"])),
        "n_confirmed_goals": n,
        "n_confirmed_completed": totals["completed"],
        "n_confirmed_failed": totals["failed"],
        "n_confirmed_undetected": undetected,
        "confirmed_breakdown": breakdown,
    }
