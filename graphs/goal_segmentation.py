"""Goal segmentation subsystem: split a dialogue into goals (paper 004, Section 4.1).

One thread per dialogue. Input: a dialogue record (paper 004 Appendix E fields). Output: per
turn ``is_new_goal`` (turn 1 always starts a goal) and the goal spans, with the judge that
produced the labels.
"""

from __future__ import annotations

from typing import Any, NotRequired

from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from graphs.context import Context
from nodes.segmentation import build_goal_spans, segment_goals


class TurnSegment(TypedDict):
    """One turn's label."""

    turn_number: int
    is_new_goal: bool | None
    p_new_goal: float | None


class GoalSpan(TypedDict):
    """A goal: turns ``start_turn..end_turn`` (1-based, inclusive)."""

    goal_index: int
    start_turn: int
    end_turn: int


class SegmentationInput(TypedDict):
    """A dialogue record: ``dialog_id`` and ``turns[{turn_number, user_msg, response, ...}]``."""

    dialogue: dict[str, Any]


class SegmentationOutput(TypedDict):
    """The labels and goal spans of one dialogue."""

    dialogue_id: str
    turns: list[TurnSegment]
    goals: list[GoalSpan]
    judge: str
    reason: NotRequired[str | None]


class SegmentationState(SegmentationInput, SegmentationOutput, total=False):
    """Everything the graph's nodes read and write."""


def build_goal_segmentation_graph() -> StateGraph[Any, Context, Any, Any]:
    """``segment_goals`` (the judge) then ``build_goal_spans``."""
    builder = StateGraph(
        SegmentationState,
        context_schema=Context,
        input_schema=SegmentationInput,
        output_schema=SegmentationOutput,
    )
    builder.add_node("segment_goals", segment_goals)
    builder.add_node("build_goal_spans", build_goal_spans)
    builder.add_edge(START, "segment_goals")
    builder.add_edge("segment_goals", "build_goal_spans")
    builder.add_edge("build_goal_spans", END)
    return builder


graph = build_goal_segmentation_graph().compile(name="goal_segmentation")
