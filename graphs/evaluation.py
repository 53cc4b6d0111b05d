"""Top-level evaluation graph: every subsystem that applies to a record, in parallel.

Input: one record (``EvaluationRecord.model_dump(mode="json")``, see
:mod:`evals.record_views`) and optionally the suites to run. ``route_suites`` decides which
subsystems apply (segmentation + goal success and goal tracking always; goal-shift metrics when
the record has tool calls or goal-shift annotations; memory metrics when the user has earlier
sessions) and fans out with ``Send``; each branch runs its subsystem graph inside a node, and
``collect_results`` returns one result keyed by suite::

    START -> route_suites -> run_goal_success | run_goal_tracking | run_goal_shift | run_memory
          -> collect_results -> END
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, NotRequired, cast

from langgraph.graph import END, START, StateGraph
from langgraph.types import Send
from typing_extensions import TypedDict

from evals.record_views import SUITES, EvaluationRecord, Suite, applicable_suites
from graphs.context import Context
from nodes.evaluation import run_goal_shift, run_goal_success, run_goal_tracking, run_memory

#: The node that runs each suite.
SUITE_NODES: dict[Suite, str] = {
    "gsr": "run_goal_success",
    "goals": "run_goal_tracking",
    "shift": "run_goal_shift",
    "memory": "run_memory",
}


def merge_results(left: dict[str, Any], right: dict[str, Any]) -> dict[str, Any]:
    """Parallel branches each add their suite's output."""
    return {**left, **right}


class EvaluationInput(TypedDict):
    """One record and, optionally, the suites wanted (default: every one that applies)."""

    record: dict[str, Any]
    suites: NotRequired[list[str] | None]


class EvaluationOutput(TypedDict):
    """The record's id, the suites that ran and each one's output."""

    record_id: str
    suites: list[str]
    results: dict[str, Any]


class SuiteTask(TypedDict):
    """What ``Send`` hands one suite's branch."""

    record: dict[str, Any]


class EvaluationState(EvaluationInput, total=False):
    """Everything the graph's nodes read and write."""

    record_id: str
    suites: list[str]  # type: ignore[misc]  # narrowed: the suites that run
    results: Annotated[dict[str, Any], merge_results]


def plan_suites(state: EvaluationState) -> dict[str, Any]:
    """Validate the record and decide which suites run."""
    record = EvaluationRecord.model_validate(state["record"])
    wanted = [s for s in SUITES if s in (state.get("suites") or SUITES)]
    return {"record_id": record.record_id, "suites": applicable_suites(record, wanted)}


def route_suites(state: Mapping[str, Any]) -> list[Send]:
    """One branch per suite, each with the record."""
    return [Send(SUITE_NODES[suite], {"record": state["record"]}) for suite in state["suites"]]


def collect_results(state: EvaluationState) -> dict[str, Any]:
    """Every branch has reported (the join)."""
    return {"results": {}}


def build_evaluation_graph() -> StateGraph[Any, Context, Any, Any]:
    """Plan, fan out, collect."""
    builder = StateGraph(
        EvaluationState,
        context_schema=Context,
        input_schema=EvaluationInput,
        output_schema=EvaluationOutput,
    )
    builder.add_node("plan_suites", plan_suites)
    # A Send target reads its own input (the record), not the graph state.
    for name, action in (
        ("run_goal_success", run_goal_success),
        ("run_goal_tracking", run_goal_tracking),
        ("run_goal_shift", run_goal_shift),
        ("run_memory", run_memory),
    ):
        builder.add_node(name, cast(Any, action), input_schema=SuiteTask)
    builder.add_node("collect_results", collect_results)
    builder.add_edge(START, "plan_suites")
    builder.add_conditional_edges("plan_suites", route_suites, list(SUITE_NODES.values()))
    for node in SUITE_NODES.values():
        builder.add_edge(node, "collect_results")
    builder.add_edge("collect_results", END)
    return builder


graph = build_evaluation_graph().compile(name="evaluation")
