"""Goal-shift subsystem: one agent conversation scored the AgentChangeBench way (paper 002).

One thread per conversation. Input: a :class:`~evals.goal_shift_schema.Conversation` as JSON
and, when known, the domain's tool schemas. Output: the conversation's TSR with its channels,
TUE (T, P), TCRR (window, batch), its tool-call records, and its goal shifts with GSRT
latencies, each labelled with the judge that produced it. Run-level figures (pooled rates,
pass^k, breakdowns) come from :func:`evals.metrics.goal_shift.goal_shift_summary` over the
outputs.

``parse_conversation`` -> ``measure_tool_use`` -> ``detect_shifts`` -> ``score_task_success``
-> ``build_result``.
"""

from __future__ import annotations

from typing import Any, NotRequired

from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from evals.metrics.goal_shift_recovery import ShiftRecovery
from evals.metrics.tool_use import ToolCallRecord
from graphs.context import Context
from nodes.goal_shift import (
    build_result,
    detect_shifts,
    measure_tool_use,
    parse_conversation,
    score_task_success,
)


class GoalShiftInput(TypedDict):
    """A conversation (``Conversation.model_dump(mode="json")``) and the tool schemas."""

    conversation: dict[str, Any]
    tool_schemas: NotRequired[dict[str, dict[str, Any]] | None]


class GoalShiftOutput(TypedDict):
    """One conversation's figures; rates are None when they cannot be computed."""

    dialogue_id: str
    task_id: str
    trial: int
    domain: str | None
    persona: str | None
    goal_sequence: str
    reward: float | None
    tsr: float | None
    tsr_channels: dict[str, float | None]
    tsr_weights: dict[str, float]
    nl_assertions: list[dict[str, Any]]
    nl_judge: NotRequired[str | None]
    tool_calls: list[ToolCallRecord]
    tue: float | None
    tool_correctness: float | None
    param_validity: float | None
    num_tool_calls: int
    tcrr: float | None
    tcrr_window: float | None
    tcrr_batch: float | None
    num_redundant: int
    shifts: list[ShiftRecovery]
    shift_judge: str
    shift_reason: str | None
    shifts_judged: NotRequired[bool]
    gsrt: dict[str, Any]
    issues: list[dict[str, Any]]


class GoalShiftState(GoalShiftInput, GoalShiftOutput, total=False):
    """Everything the graph's nodes read and write."""


def build_goal_shift_graph() -> StateGraph[Any, Context, Any, Any]:
    """The five nodes in a line."""
    builder = StateGraph(
        GoalShiftState,
        context_schema=Context,
        input_schema=GoalShiftInput,
        output_schema=GoalShiftOutput,
    )
    builder.add_node("parse_conversation", parse_conversation)
    builder.add_node("measure_tool_use", measure_tool_use)
    builder.add_node("detect_shifts", detect_shifts)
    builder.add_node("score_task_success", score_task_success)
    builder.add_node("build_result", build_result)
    builder.add_edge(START, "parse_conversation")
    builder.add_edge("parse_conversation", "measure_tool_use")
    builder.add_edge("measure_tool_use", "detect_shifts")
    builder.add_edge("detect_shifts", "score_task_success")
    builder.add_edge("score_task_success", "build_result")
    builder.add_edge("build_result", END)
    return builder


graph = build_goal_shift_graph().compile(name="goal_shift")
