"""Task completion and efficiency (ATOD, paper 000, Section 6.1): dGCR and NTC.

Both are read from a goal memory: dGCR from the goals' final ``status`` and ``dependencies``,
NTC (Turns to Completion) from their ``status_history``, so they score a tracker's memory and
the gold annotations (:func:`~evals.metrics.goal_tracking.goal_records.gold_goal_records`) alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from todeval.evals.goal_tracking_schema import DECIDED_STATUSES
from todeval.evals.metrics.goal_tracking.goal_records import (
    GoalRecord,
    canonical_status,
    is_mentioned,
)


def dependency_aware_goal_completion_rate(
    statuses: Mapping[str, str | None], dependencies: Mapping[str, Iterable[str]] | None = None
) -> float | None:
    """dGCR: completed goals over decided goals whose prerequisites are met (Section 6.1).

    A goal with an unmet prerequisite is left out whatever its status: a ``failed`` is the
    dependency-locked case the paper removes, a ``completed`` is premature. An unknown
    prerequisite blocks; a goal listed as its own prerequisite is ignored. Statuses compare
    case-blind. ``None`` when no unblocked goal is decided.
    """
    completed, decided, _ = _dgcr_counts(statuses, dependencies)
    return completed / decided if decided else None


dgcr = dependency_aware_goal_completion_rate


def turns_to_completion(goals: Iterable[GoalRecord]) -> float | None:
    """NTC: mean turns from initiation to completion over completed goals (Section 6.1)."""
    spans = turns_to_completion_per_goal(goals)
    return sum(spans) / len(spans) if spans else None


def turns_to_completion_per_goal(goals: Iterable[GoalRecord]) -> list[int]:
    """Completion turn minus initiation turn of each completed goal, from ``status_history``.

    Initiation is the first entry whose status is not ``not_mentioned``, completion the first
    ``completed`` entry (entries are sorted by turn first). A goal raised and completed in one
    utterance counts 0; a user request answered by the next system utterance counts 1. Goals
    without a ``completed`` entry are left out, whatever their ``status`` says.
    """
    spans = []
    for goal in goals:
        history = sorted(
            (
                (int(entry["turn"]), canonical_status(entry["status"]))
                for entry in goal.get("status_history") or []
            ),
            key=lambda entry: entry[0],
        )
        started = next((turn for turn, status in history if is_mentioned(status)), None)
        completed = next((turn for turn, status in history if status == "completed"), None)
        if started is not None and completed is not None:
            spans.append(completed - started)
    return spans


def goal_counts(goals: Sequence[GoalRecord]) -> tuple[int, int, int]:
    """Completed, decided and blocked goals of goal records, as dGCR counts them."""
    statuses = {str(goal["goal_id"]): goal.get("status") for goal in goals}
    dependencies = {str(goal["goal_id"]): goal.get("dependencies") or [] for goal in goals}
    return _dgcr_counts(statuses, dependencies)


def _dgcr_counts(
    statuses: Mapping[str, str | None], dependencies: Mapping[str, Iterable[str]] | None
) -> tuple[int, int, int]:
    """Completed, decided and blocked goals as dGCR counts them."""
    completed = decided = blocked = 0
    for goal_id, status in statuses.items():
        prerequisites = [p for p in (dependencies or {}).get(goal_id, ()) if p != goal_id]
        if any(canonical_status(statuses.get(p)) != "completed" for p in prerequisites):
            blocked += 1
        elif canonical_status(status) in DECIDED_STATUSES:
            decided += 1
            completed += canonical_status(status) == "completed"
    return completed, decided, blocked
