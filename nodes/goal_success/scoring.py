"""Nodes of the goal-success graph: goal spans + voted turn labels -> each goal's success (§4.2)."""

from __future__ import annotations

from typing import Any

from todeval.evals.metrics.goal_success.success_rate import score_goals as score_goal_spans
from todeval.nodes.goal_success.segmentation import vote_boundaries
from todeval.nodes.goal_success.state import GoalSuccessState


def score_goals(state: GoalSuccessState) -> dict[str, Any]:
    """Boundaries voted with the segmenting teachers, then each goal scored (strict GSR).

    A goal succeeds only if every turn in it succeeds; its root cause is the earliest failure.
    """
    segmentation = vote_boundaries(state["segmentation"], state["turns"])
    return {
        "segmentation": segmentation,
        "goals": score_goal_spans(segmentation["goals"], state["turns"]),
    }
