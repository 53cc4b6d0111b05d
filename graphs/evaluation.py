"""Top-level evaluation graph: every subsystem that applies to a record, in parallel.

Input: one record (``EvaluationRecord.model_dump(mode="json")``, see
:mod:`evals.record_views`) and optionally the suites to run. ``route_suites`` decides which
subsystems apply (segmentation + goal success and goal tracking always; goal-shift metrics when
the record has tool calls or goal-shift annotations; memory metrics when the user has earlier
sessions; ProactiveEval's plan and/or guidance scoring when the record carries an environment)
and fans out with ``Send``; each branch runs its subsystem graph inside a node and adds its
output to ``results`` (keyed by suite); the run ends when every branch has::

    START -> plan_suites -> run_goal_success | run_goal_tracking | run_goal_shift | run_memory
                            | run_proactive -> END

Each branch invokes its subsystem graph inside the node, so the subsystem's state lives on this
graph's checkpointer (``get_state(config, subgraphs=True)`` shows it) and an interrupt inside
it (a goal-success escalation) pauses the whole evaluation thread.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, NotRequired, cast

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send
from typing_extensions import TypedDict

from evals.memory_schema import Individual
from evals.record_views import (
    SUITES,
    EvaluationRecord,
    Suite,
    applicable_suites,
    atod_view,
    suite_named,
)
from graphs.goal_shift import graph as goal_shift_graph
from graphs.goal_success import graph as goal_success_graph
from graphs.goal_tracking import baseline_graph as baseline_tracker_graph
from graphs.goal_tracking import graph as goal_tracker_graph
from graphs.memory import graph as memory_active_graph
from graphs.proactive import guidance_scoring_graph, plan_scoring_graph
from nodes.context import Context, get_context
from nodes.memory.bank import fill_bank

#: The node that runs each suite.
SUITE_NODES: dict[Suite, str] = {
    "goal_success": "run_goal_success",
    "goal_tracking": "run_goal_tracking",
    "goal_shift": "run_goal_shift",
    "memory": "run_memory",
    "proactive": "run_proactive",
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
    named = {suite_named(name) for name in state.get("suites") or SUITES}
    wanted = [s for s in SUITES if s in named]
    return {"record_id": record.record_id, "suites": applicable_suites(record, wanted)}


def route_suites(state: Mapping[str, Any]) -> list[Send]:
    """One branch per suite, each with the record."""
    return [Send(SUITE_NODES[suite], {"record": state["record"]}) for suite in state["suites"]]


def _record(payload: dict[str, Any]) -> EvaluationRecord:
    return EvaluationRecord.model_validate(payload["record"])


def run_goal_success(payload: dict[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
    """Goal segmentation, teacher voting and GSR on the record's dialogue."""
    record = _record(payload)
    output = goal_success_graph.invoke(
        {"dialogue": record.dialogue.model_dump(mode="json")}, context=get_context(runtime)
    )
    return {"results": {"goal_success": output}}


def run_goal_tracking(payload: dict[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
    """``Context.goal_tracker`` (ATOD's or a Table 3 baseline) over the record's utterances."""
    record = _record(payload)
    context = get_context(runtime)
    tracker = goal_tracker_graph if context.goal_tracker == "atod" else baseline_tracker_graph
    output = tracker.invoke(
        {
            "dialogue_id": record.record_id,
            "utterances": tracker_utterances(record),
            "final": True,
        },
        context=context,
    )
    return {"results": {"goal_tracking": output}}


def tracker_utterances(record: EvaluationRecord) -> list[dict[str, str]]:
    """The utterances in order: the ATOD turns when there are, else user message, response."""
    atod = record.atod or atod_view(record.dialogue)
    return [{"speaker": t.speaker, "text": t.utterance} for t in atod.turns]


def run_goal_shift(payload: dict[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
    """TSR, TUE, TCRR and GSRT on the record's agent transcript."""
    record = _record(payload)
    assert record.conversation is not None  # the router sends only records that have one
    output = goal_shift_graph.invoke(
        {"conversation": record.conversation.model_dump(mode="json")},
        context=get_context(runtime),
    )
    return {"results": {"goal_shift": output}}


def run_memory(payload: dict[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
    """The memory-active policy on the record's item, the user's sessions in their bank."""
    record = _record(payload)
    assert record.memory is not None  # the router sends only records that have one
    context = get_context(runtime)
    memory = record.memory
    fill_bank(
        context,
        Individual(individual_id=memory.individual_id, sessions=memory.sessions, eval=[]),
    )
    item = memory.item
    output = memory_active_graph.invoke(
        {
            "individual_id": memory.individual_id,
            "intent": item.intent,
            "service": (item.model_extra or {}).get("domain"),
            "context": [turn.model_dump() for turn in item.context],
            "task_goal": dict(item.task_goal),
            "reference_response": item.reference_response,  # what the GPT-4 scorer compares
        },
        context=context,
    )
    return {"results": {"memory": output}}


def run_proactive(payload: dict[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
    """The target-planning judge on the agent's plan, the guidance judge on its dialogue."""
    record = _record(payload)
    case = record.proactive
    assert case is not None  # the router sends only records that have one
    context = get_context(runtime)
    given = {
        "eval_id": case.eval_id,
        "environment": case.environment.model_dump(),
        "reference": case.reference.model_dump(),
    }
    output: dict[str, Any] = {"plan": None, "guidance": None}
    if case.plan is not None:
        scored = plan_scoring_graph.invoke(
            given | {"domain": case.domain, "plan": case.plan.model_dump()}, context=context
        )
        output["plan"] = {"plan_verdict": scored["plan_verdict"]}
    if case.messages:
        messages = [message.model_dump() for message in case.messages]
        scored = guidance_scoring_graph.invoke(given | {"messages": messages}, context=context)
        output["guidance"] = {k: scored[k] for k in ("guidance_verdict", "density")}
    return {"results": {"proactive": output}}


def build_evaluation_graph() -> StateGraph[Any, Context, Any, Any]:
    """Plan, fan out; the branches' outputs merge into ``results`` (no join step needed)."""
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
        ("run_proactive", run_proactive),
    ):
        builder.add_node(name, cast(Any, action), input_schema=SuiteTask)
    builder.add_edge(START, "plan_suites")
    builder.add_conditional_edges("plan_suites", route_suites, list(SUITE_NODES.values()))
    for node in SUITE_NODES.values():
        builder.add_edge(node, END)
    return builder


graph = build_evaluation_graph().compile(name="evaluation")
