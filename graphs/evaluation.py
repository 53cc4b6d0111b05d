"""Top-level evaluation graph: every subsystem that applies to a record, in parallel.

Input: one record (``EvaluationRecord.model_dump(mode="json")``, see
:mod:`evals.record_views`) and optionally the suites to run. ``plan_suites`` validates the record
once, decides which subsystems apply (segmentation + goal success and goal tracking always;
goal-shift metrics when the record has tool calls or goal-shift annotations; memory metrics when
the user has earlier sessions; ProactiveEval's plan and/or guidance scoring when the record
carries an environment) and fans out with ``Send``, each branch getting the part of the record
its subsystem reads; each branch runs its subsystem and adds its output to ``results`` (keyed
by suite); the run ends when every branch has::

    START -> plan_suites -> run_goal_success | run_goal_tracking | run_goal_shift | run_memory
                            | run_proactive | run_local_suites -> END

A branch invokes its subsystem graph inside the node, so the subsystem's state lives on this
graph's checkpointer (``get_state(config, subgraphs=True)`` shows it) and an interrupt inside
it (a goal-success escalation) pauses the whole evaluation thread. The goal tracker's graphs
have one node, which the goal-tracking branch calls as the function it is.

Branches that only compute (local judges, no escalation: see :func:`computes_only`) go to
``run_local_suites`` together, one after the other: in parallel they would only take turns at
the interpreter's lock, and LangGraph starts a thread pool for every step with two tasks or
more (about a tenth of a warm corpus run). Branches that wait on an LLM or may pause keep a
``Send`` each, so their waits overlap.
"""

from __future__ import annotations

from typing import Annotated, Any, NotRequired, cast

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Command, Send
from typing_extensions import TypedDict

from todeval.evals.memory_schema import Individual
from todeval.evals.record_views import (
    SUITES,
    EvaluationRecord,
    MemoryItem,
    ProactiveCase,
    Suite,
    applicable_suites,
    atod_view,
    suite_named,
)
from todeval.graphs.goal_shift import graph as goal_shift_graph
from todeval.graphs.goal_success import goal_success_steps, runs_as_functions
from todeval.graphs.goal_success import graph as goal_success_graph
from todeval.graphs.memory import graph as memory_active_graph
from todeval.graphs.proactive import guidance_scoring_graph, plan_scoring_graph
from todeval.nodes.context import Context, get_context
from todeval.nodes.goal_tracking.baselines.tracker import answer_utterances
from todeval.nodes.goal_tracking.llm_steps import uses_llm
from todeval.nodes.goal_tracking.state import GoalTrackingOutput, GoalTrackingState
from todeval.nodes.goal_tracking.tracker import track_utterances
from todeval.nodes.judges.spec import parse_spec
from todeval.nodes.memory.bank import fill_bank

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


class SuiteTask(TypedDict, total=False):
    """What ``Send`` hands one suite's branch: the part of the record its subsystem reads."""

    dialogue: dict[str, Any]
    """Goal success: the dialogue view (JSON)."""
    dialogue_id: str
    utterances: list[dict[str, str]]
    """Goal tracking: the record's id and its utterances in order."""
    conversation: dict[str, Any]
    """Goal shift: the agent transcript (JSON)."""
    memory: dict[str, Any]
    """Memory: the item and the user's earlier sessions (JSON)."""
    proactive: dict[str, Any]
    """ProactiveEval: the environment and the agent's output (JSON)."""


class LocalSuitesTask(TypedDict):
    """What ``Send`` hands ``run_local_suites``: each suite's task, in running order."""

    tasks: dict[str, SuiteTask]


class EvaluationState(EvaluationInput, total=False):
    """Everything the graph's nodes read and write."""

    record_id: str
    suites: list[str]  # type: ignore[misc]  # narrowed: the suites that run
    results: Annotated[dict[str, Any], merge_results]


def plan_suites(state: EvaluationState, runtime: Runtime[Context]) -> Command[str]:
    """Validate the record (once), decide which suites run, send each its part of the record.

    The suites that only compute go together, to ``run_local_suites``.
    """
    record = EvaluationRecord.model_validate(state["record"])
    named = {suite_named(name) for name in state.get("suites") or SUITES}
    suites = applicable_suites(record, [s for s in SUITES if s in named])
    tasks = {suite: suite_task(suite, record, state["record"]) for suite in suites}
    context = get_context(runtime)
    together = [suite for suite in suites if computes_only(suite, context)]
    if len(together) < 2:
        together = []
    goto = [Send(SUITE_NODES[suite], tasks[suite]) for suite in suites if suite not in together]
    if together:
        local = {suite: tasks[suite] for suite in together}
        goto.append(Send("run_local_suites", {"tasks": local}))
    return Command(update={"record_id": record.record_id, "suites": suites}, goto=goto)


def computes_only(suite: Suite, context: Context) -> bool:
    """Whether ``suite``'s branch only computes: its judges are local and nothing in it pauses.

    The goal-shift, memory and ProactiveEval branches keep their own ``Send`` whatever their
    judges: their nested graphs are the shape Studio shows, and no corpus of ours is large in
    them.
    """
    if suite == "goal_success":
        return runs_as_functions(context) and parse_spec(context.segmentation_judge).is_local
    if suite == "goal_tracking":
        return not uses_llm(context)
    return False


def suite_task(suite: Suite, record: EvaluationRecord, raw: dict[str, Any]) -> SuiteTask:
    """What ``suite``'s branch reads of the record (JSON parts pass through as they came)."""
    if suite == "goal_success":
        return {"dialogue": raw["dialogue"]}
    if suite == "goal_tracking":
        return {"dialogue_id": record.record_id, "utterances": tracker_utterances(record)}
    if suite == "goal_shift":
        return {"conversation": raw["conversation"]}
    if suite == "memory":
        return {"memory": raw["memory"]}
    return {"proactive": raw["proactive"]}


def run_goal_success(payload: SuiteTask, runtime: Runtime[Context]) -> dict[str, Any]:
    """Goal segmentation, teacher voting and GSR on the record's dialogue.

    As functions when nothing in them can pause or run in parallel (see ``graphs.goal_success``).
    """
    context = get_context(runtime)
    if runs_as_functions(context):
        return {"results": {"goal_success": goal_success_steps(payload["dialogue"], runtime)}}
    output = goal_success_graph.invoke({"dialogue": payload["dialogue"]}, context=context)
    return {"results": {"goal_success": output}}


def run_goal_tracking(payload: SuiteTask, runtime: Runtime[Context]) -> dict[str, Any]:
    """``Context.goal_tracker`` (ATOD's or a Table 3 baseline) over the record's utterances.

    The tracker graphs have one node each; it runs here as the function it is (a nested graph
    would be a second Pregel loop around one call; nothing in it pauses).
    """
    context = get_context(runtime)
    track = track_utterances if context.goal_tracker == "atod" else answer_utterances
    given = {"dialogue_id": payload["dialogue_id"], "utterances": payload["utterances"]}
    done = track(cast(GoalTrackingState, given | {"final": True}), runtime)
    output = {"dialogue_id": payload["dialogue_id"]} | {
        key: done[key] for key in GoalTrackingOutput.__annotations__ if key in done
    }
    return {"results": {"goal_tracking": output}}


def tracker_utterances(record: EvaluationRecord) -> list[dict[str, str]]:
    """The utterances in order: the ATOD turns when there are, else user message, response."""
    atod = record.atod or atod_view(record.dialogue)
    return [{"speaker": t.speaker, "text": t.utterance} for t in atod.turns]


def run_goal_shift(payload: SuiteTask, runtime: Runtime[Context]) -> dict[str, Any]:
    """TSR, TUE, TCRR and GSRT on the record's agent transcript."""
    output = goal_shift_graph.invoke(
        {"conversation": payload["conversation"]}, context=get_context(runtime)
    )
    return {"results": {"goal_shift": output}}


def run_memory(payload: SuiteTask, runtime: Runtime[Context]) -> dict[str, Any]:
    """The memory-active policy on the record's item, the user's sessions in their bank."""
    context = get_context(runtime)
    memory = MemoryItem.model_validate(payload["memory"])
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


def run_proactive(payload: SuiteTask, runtime: Runtime[Context]) -> dict[str, Any]:
    """The target-planning judge on the agent's plan, the guidance judge on its dialogue."""
    case = ProactiveCase.model_validate(payload["proactive"])
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


def run_local_suites(payload: LocalSuitesTask, runtime: Runtime[Context]) -> dict[str, Any]:
    """The suites that only compute, one after the other (see :func:`computes_only`)."""
    results: dict[str, Any] = {}
    for suite, task in payload["tasks"].items():
        results |= SUITE_RUNNERS[cast(Suite, suite)](task, runtime)["results"]
    return {"results": results}


#: Each suite's branch, as a function of its task.
SUITE_RUNNERS: dict[Suite, Any] = {
    "goal_success": run_goal_success,
    "goal_tracking": run_goal_tracking,
    "goal_shift": run_goal_shift,
    "memory": run_memory,
    "proactive": run_proactive,
}


def build_evaluation_graph() -> StateGraph[Any, Context, Any, Any]:
    """Plan, fan out; the branches' outputs merge into ``results`` (no join step needed)."""
    builder = StateGraph(
        EvaluationState,
        context_schema=Context,
        input_schema=EvaluationInput,
        output_schema=EvaluationOutput,
    )
    nodes = (*SUITE_NODES.values(), "run_local_suites")
    builder.add_node("plan_suites", plan_suites, destinations=nodes)
    # A Send target reads its own input (its part of the record), not the graph state.
    for suite, name in SUITE_NODES.items():
        builder.add_node(name, cast(Any, SUITE_RUNNERS[suite]), input_schema=SuiteTask)
    builder.add_node("run_local_suites", cast(Any, run_local_suites), input_schema=LocalSuitesTask)
    builder.add_edge(START, "plan_suites")
    for node in nodes:
        builder.add_edge(node, END)
    return builder


graph = build_evaluation_graph().compile(name="evaluation")
