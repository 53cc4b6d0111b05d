"""Goal tracker subsystem: ATOD's agentic memory over a dialogue, turn by turn (paper 000, §5).

Offline, one call carries a whole dialogue (``utterances`` = every utterance, ``final=True``).
Online, each call on the same thread adds the utterances said since the last call and returns
the current goal states; ``final=True`` on the last call runs the closing audit.

``append_utterances`` -> ``sync_memory`` -> per utterance ``extract_goals`` ->
``check_existence`` -> ``update_memory`` (-> ``proactive_audit`` every ``audit_every``
utterances and at the end).
"""

from __future__ import annotations

from typing import Any, NotRequired

from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from graphs.context import Context
from nodes.goal_tracker import (
    append_utterances,
    check_existence_node,
    extract_goals,
    proactive_audit,
    route_after_update,
    route_next,
    sync_memory,
    update_memory,
)


class TrackerInput(TypedDict):
    """New utterances of one dialogue: ``[{"speaker": "USER"|"SYSTEM", "text": ...}]``."""

    dialogue_id: str
    utterances: list[dict[str, Any]]
    final: NotRequired[bool]


class TrackerOutput(TypedDict):
    """The goal memory after the last utterance, and per-utterance records."""

    dialogue_id: str
    goals: list[dict[str, Any]]
    turns: list[dict[str, Any]]
    costs: list[dict[str, Any]]
    queries: list[dict[str, Any]]


class TrackerState(TrackerInput, TrackerOutput, total=False):
    """Everything the graph's nodes read and write."""

    history: list[dict[str, Any]]
    cursor: int
    candidates: list[dict[str, Any]]
    turn_ms: float
    turn_cost: dict[str, int]
    audited_final: bool


def build_goal_tracker_graph() -> StateGraph[Any, Context, Any, Any]:
    """The turn pipeline as a loop over unprocessed utterances."""
    builder = StateGraph(
        TrackerState, context_schema=Context, input_schema=TrackerInput, output_schema=TrackerOutput
    )
    builder.add_node("append_utterances", append_utterances)
    builder.add_node("sync_memory", sync_memory)
    builder.add_node("extract_goals", extract_goals)
    builder.add_node("check_existence", check_existence_node)
    builder.add_node("update_memory", update_memory)
    builder.add_node("proactive_audit", proactive_audit)
    builder.add_edge(START, "append_utterances")
    builder.add_edge("append_utterances", "sync_memory")
    builder.add_conditional_edges(
        "sync_memory", route_next, ["extract_goals", "proactive_audit", END]
    )
    builder.add_edge("extract_goals", "check_existence")
    builder.add_edge("check_existence", "update_memory")
    builder.add_conditional_edges(
        "update_memory", route_after_update, ["proactive_audit", "extract_goals", END]
    )
    builder.add_conditional_edges(
        "proactive_audit", route_next, ["extract_goals", "proactive_audit", END]
    )
    return builder


graph = build_goal_tracker_graph().compile(name="goal_tracker")
