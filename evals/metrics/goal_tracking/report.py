"""Goal-tracking metrics (ATOD, paper 000, Sections 6-8): the corpus report and the public API.

:func:`goal_tracking_report` gathers a tracker's figures over many dialogues from the metric
modules, whose public names are re-exported here:

- :mod:`evals.metrics.goal_tracking.goal_records`: the tracker's and gold goal records and states,
  and the conventions the figures share (``None`` over nothing, rates rounded to 4 decimals).
- :mod:`evals.metrics.goal_tracking.task_completion`: dGCR and NTC (Section 6.1).
- :mod:`evals.metrics.goal_tracking.goal_detection`: goal matching, detection precision, recall and
  F1, and status tracking accuracy (Section 7, Table 3).
- :mod:`evals.metrics.goal_tracking.confirmed_status`: status accuracy on the goals whose outcome
  the dialogue itself confirms (gold goals with ``confirmed``), undetected ones counted wrong.
- :mod:`evals.metrics.goal_tracking.dialogue_progress`: both against normalised dialogue progress
  (Fig. 3).
- :mod:`evals.metrics.goal_tracking.agentic_capability`: Memory Recall Accuracy and Proactivity
  Effectiveness (Section 6.2).
- :mod:`evals.metrics.goal_tracking.costs`: per-turn latency, LLM calls and tokens (Section 8.2).

Corpus figures pool counts over dialogues (goals, pairs, queries, turns), so a dialogue weighs
by what it contains; the per-dialogue figures are listed too, with their plain means under
``macro``, for per-dialogue averages and correlations (Tables 3-5).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from todeval.evals.metrics.goal_tracking.agentic_capability import (
    memory_recall_accuracy,
    proactivity_effectiveness,
)
from todeval.evals.metrics.goal_tracking.corpus_tally import GoalTrackingTally, Matcher
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
    "Matcher",
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

    Each result is ``{"dialogue_id", "gold", "goals", "turns", "costs", "queries"}`` with
    ``gold`` an :class:`AtodDialogue` (or its dict) or ``None``, and optionally
    ``proactivity_verdicts``. dGCR and NTC are read from the tracker's memory (final ``status``,
    ``dependencies``, ``status_history``) and come from every dialogue, as do costs; detection,
    status accuracy, the progress curve and memory recall need gold. Final-state figures use
    the goals' ``status``; the curve uses ``turns``, so its last point can differ if the two
    disagree. A dialogue without ``turns`` has no curve. ``key``, ``similar`` and
    ``threshold`` go to :func:`match_goals`, which re-matches at every curve point.

    Returns:
        ``dgcr``, ``dgcr_gold`` (the same on the gold annotations), ``n_decided_goals``,
        ``n_blocked_goals``; ``ntc``, ``ntc_gold``, ``n_completed_goals``;
        ``goal_detection_precision``, ``goal_detection_recall``, ``goal_detection_f1``,
        ``n_pred_goals``, ``n_gold_goals``, ``n_matched_goals``; ``status_accuracy``; the
        :func:`~evals.metrics.goal_tracking.confirmed_status.confirmed_status_report` figures
        (``confirmed_status_accuracy``, its completed and failed parts, the breakdown);
        ``progress_curve`` (pooled); ``memory_recall_accuracy``, ``n_memory_queries``,
        ``memory_recall_state_accuracy`` and ``memory_recall_by_aspect`` (slots, status,
        history: :mod:`~evals.metrics.goal_tracking.memory_state`); ``metric_validity``
        (Table 5: :mod:`~evals.metrics.goal_tracking.metric_validity`); ``response_quality``
        (:mod:`~evals.metrics.goal_tracking.response_quality`);
        ``proactivity_effectiveness`` (a dict, see :func:`proactivity_effectiveness`); the
        :func:`cost_report` figures; ``n_dialogues``, ``n_gold_dialogues``; ``dialogues``:
        per dialogue ``dialogue_id``, ``dgcr``, ``ntc``, ``goal_detection_f1``,
        ``status_accuracy``, ``memory_recall_accuracy`` and ``counts``; ``macro``: their means
        over the dialogues where each is defined. Pooled as the module notes say; rounded.
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
