"""Goal success subsystem: segmentation and teacher voting composed, then GSR per goal (paper 004).

``goal_segmentation`` (subgraph) -> ``teacher_voting`` (subgraph; may pause for a human) ->
``score_goals``: a goal succeeds only if every turn in it succeeds, and a failed goal's root
cause is the code of its earliest failed turn. Each goal also carries the paper's footnote-1
alternatives: fractional credit and last-turn success.

The subgraphs run inside wrapper nodes (their state keys differ from this graph's); they share
this graph's checkpointer, so their state stays inspectable with ``get_state(config,
subgraphs=True)`` and an interrupt inside ``teacher_voting`` pauses the whole thread.
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict

from graphs.context import Context, get_context
from graphs.goal_segmentation import SegmentationOutput
from graphs.goal_segmentation import graph as goal_segmentation_graph
from graphs.teacher_voting import VotedTurn
from graphs.teacher_voting import graph as teacher_voting_graph
from nodes.goal_success import score_goals


class GoalScore(TypedDict):
    """One goal's outcome (see :func:`evals.metrics.goal_success.score_goals`)."""

    goal_index: int
    start_turn: int
    end_turn: int
    n_turns: int
    success: bool | None
    rcof: str | None
    fractional_credit: float | None
    last_turn_success: bool | None
    turns: list[VotedTurn]


class GoalSuccessInput(TypedDict):
    """A dialogue record: ``dialog_id`` and ``turns[{turn_number, user_msg, response, ...}]``."""

    dialogue: dict[str, Any]


class GoalSuccessOutput(TypedDict):
    """Goals with their success and root cause, the voted turns and who judged."""

    dialogue_id: str
    segmentation: SegmentationOutput
    turns: list[VotedTurn]
    teachers: list[str]
    human_verdicts: list[dict[str, Any]]
    goals: list[GoalScore]


class GoalSuccessState(GoalSuccessInput, GoalSuccessOutput, total=False):
    """Everything the graph's nodes read and write."""


def run_goal_segmentation(state: GoalSuccessState, runtime: Runtime[Context]) -> dict[str, Any]:
    """The goal-segmentation subgraph on this dialogue."""
    output = goal_segmentation_graph.invoke(
        {"dialogue": state["dialogue"]}, context=get_context(runtime)
    )
    return {"dialogue_id": output["dialogue_id"], "segmentation": output}


def run_teacher_voting(state: GoalSuccessState, runtime: Runtime[Context]) -> dict[str, Any]:
    """The teacher-voting subgraph on this dialogue (pauses here for a human when ambiguous)."""
    output = teacher_voting_graph.invoke(
        {"dialogue": state["dialogue"]}, context=get_context(runtime)
    )
    return {
        "turns": output["turns"],
        "teachers": output["teachers"],
        "human_verdicts": output["human_verdicts"],
    }


def build_goal_success_graph() -> StateGraph[Any, Context, Any, Any]:
    """Segment, vote, score."""
    builder = StateGraph(
        GoalSuccessState,
        context_schema=Context,
        input_schema=GoalSuccessInput,
        output_schema=GoalSuccessOutput,
    )
    builder.add_node("goal_segmentation", run_goal_segmentation)
    builder.add_node("teacher_voting", run_teacher_voting)
    builder.add_node("score_goals", score_goals)
    builder.add_edge(START, "goal_segmentation")
    builder.add_edge("goal_segmentation", "teacher_voting")
    builder.add_edge("teacher_voting", "score_goals")
    builder.add_edge("score_goals", END)
    return builder


graph = build_goal_success_graph().compile(name="goal_success")
