"""Goal-shift subsystem: one agent conversation scored the AgentChangeBench way (paper 002).

One thread per conversation. Input: a :class:`~evals.goal_shift_schema.Conversation` as JSON
and, when known, the domain's tool schemas. Output: the conversation's TSR with its channels,
TUE (T, P), TCRR (window, batch), its tool-call records, and its goal shifts with GSRT
latencies, each labelled with the judge that produced it. Run-level figures (pooled rates,
pass^k, breakdowns) come from :func:`evals.metrics.goal_shift.summary.goal_shift_summary` over the
outputs.

``parse_conversation`` -> ``measure_tool_use`` -> ``detect_shifts`` -> ``score_task_success``
-> ``build_result``.
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict

from todeval.nodes.context import Context, get_context
from todeval.nodes.goal_shift.scoring import (
    build_result,
    detect_shifts,
    measure_tool_use,
    parse_conversation,
    score_task_success,
)
from todeval.nodes.goal_shift.state import (
    GoalShiftInput,
    GoalShiftOutput,
    GoalShiftState,
)


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


class GoalShiftTask(TypedDict):
    """What the evaluation hands goal shift: the record's agent transcript (JSON)."""

    conversation: dict[str, Any]


def run_goal_shift(payload: GoalShiftTask, runtime: Runtime[Context]) -> dict[str, Any]:
    """The evaluation's goal-shift branch: TSR, TUE, TCRR and GSRT on the transcript."""
    output = graph.invoke({"conversation": payload["conversation"]}, context=get_context(runtime))
    return {"results": {"goal_shift": output}}
