"""Nodes of the goal-success graph: goal spans + voted turn labels -> each goal's success (§4.2)."""

from __future__ import annotations

from typing import Any

from evals.metrics.goal_success.success_rate import score_goals as score_goal_spans
from nodes.goal_success.state import GoalSuccessState


def score_goals(state: GoalSuccessState) -> dict[str, Any]:
    """A goal succeeds only if every turn in it succeeds; its root cause is the earliest failure."""
    return {"goals": score_goal_spans(state["segmentation"]["goals"], state["turns"])}
