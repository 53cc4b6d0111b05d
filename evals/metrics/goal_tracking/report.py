"""Goal-tracking metrics (ATOD, paper 000, Sections 6-8): the corpus report and the public API.

:func:`goal_tracking_report` gathers the figures of the sibling modules, whose public names are
re-exported here: goal records (conventions), task completion (dGCR, NTC, 6.1), goal detection
(Section 7, Table 3), confirmed status, dialogue progress (Fig. 3), agentic capability (6.2)
and costs (8.2). Corpus figures pool counts over dialogues, so a dialogue weighs by what it
contains; per-dialogue figures and their plain means (``macro``) are listed too (Tables 3-5).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from todeval.evals.metrics.goal_tracking.agentic_capability import (
    memory_recall_accuracy,
    proactivity_effectiveness,
)
from todeval.evals.metrics.goal_tracking.corpus_tally import GoalTrackingTally
from todeval.evals.metrics.goal_tracking.costs import cost_report, with_exact_latencies
from todeval.evals.metrics.goal_tracking.dialogue_progress import (
    PairsAt,
    pool_progress_curves,
    progress_curve,
)
from todeval.evals.metrics.goal_tracking.goal_detection import (
    DetectionScores,
    GoalKey,
    Similarity,
    goal_detection_prf,
    goal_key,
    match_goals,
    status_tracking_accuracy,
)
from todeval.evals.metrics.goal_tracking.goal_records import (
    NOT_MENTIONED,
    GoalRecord,
    Pair,
    gold_goal_records,
    gold_statuses_at,
    predicted_states_at,
)
from todeval.evals.metrics.goal_tracking.task_completion import (
    dependency_aware_goal_completion_rate,
    dgcr,
    turns_to_completion,
    turns_to_completion_per_goal,
)

__all__ = [
    "NOT_MENTIONED",
    "DetectionScores",
    "GoalKey",
    "GoalRecord",
    "GoalTrackingTally",
    "Pair",
    "PairsAt",
    "Similarity",
    "cost_report",
    "dependency_aware_goal_completion_rate",
    "dgcr",
    "goal_detection_prf",
    "goal_key",
    "goal_tracking_report",
    "gold_goal_records",
    "gold_statuses_at",
    "match_goals",
    "memory_recall_accuracy",
    "pool_progress_curves",
    "predicted_states_at",
    "proactivity_effectiveness",
    "progress_curve",
    "status_tracking_accuracy",
    "turns_to_completion",
    "turns_to_completion_per_goal",
]


def goal_tracking_report(
    dialogue_results: Iterable[GoalRecord],
    *,
    key: GoalKey | None = goal_key,
    similar: Similarity | None = None,
    threshold: float = 0.5,
    bins: int = 10,
) -> dict[str, Any]:
    """Corpus goal-tracking figures of a tracker over many dialogues (Sections 6-8).

    Each result is ``{"dialogue_id", "gold", "goals", "turns", "costs", "queries"}`` (and
    optionally ``proactivity_verdicts``), ``gold`` an :class:`AtodDialogue`, its dict or
    ``None``. dGCR, NTC and costs come from every dialogue; detection, status accuracy, the
    progress curve and memory recall need gold. Final-state figures use the goals' ``status``,
    the curve uses ``turns`` (so its last point can differ). ``key``, ``similar`` and
    ``threshold`` go to :func:`match_goals`, which re-matches at every curve point. The result
    has the pooled figures, ``dialogues`` (per-dialogue rows) and ``macro`` (their means).
    """
    tally = GoalTrackingTally(key=key, similar=similar, threshold=threshold, bins=bins)
    results = list(dialogue_results)
    dialogues = [tally.add(result) for result in results]
    latencies = [
        float(cost["latency_ms"])
        for result in results
        for cost in result.get("costs") or []
        if cost.get("latency_ms") is not None
    ]  # the results are at hand: exact percentiles, not the tally's sketch
    return with_exact_latencies(tally.report(), latencies) | {"dialogues": dialogues}
