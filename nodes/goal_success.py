"""Nodes of the goal-success graph: goal spans + voted turn labels -> each goal's success (§4.2)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evals.metrics.goal_success import score_goals as score_goal_spans

if TYPE_CHECKING:
    from graphs.goal_success import GoalSuccessState


def score_goals(state: GoalSuccessState) -> dict[str, Any]:
    """A goal succeeds only if every turn in it succeeds; its root cause is the earliest failure."""
    return {"goals": score_goal_spans(state["segmentation"]["goals"], state["turns"])}
