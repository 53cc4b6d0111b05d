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

Which suites exist, what each reads and the node that runs it come from the subsystem registry
(:data:`evals.subsystems.SUBSYSTEMS` and each one's ``EvaluationSuite``).

A branch invokes its subsystem graph inside the node, so the subsystem's state lives on this
graph's checkpointer (``get_state(config, subgraphs=True)`` shows it) and an interrupt inside
it (a goal-success escalation) pauses the whole evaluation thread. The goal tracker's graphs
have one node, which the goal-tracking branch calls as the function it is.

Branches that only compute (local judges, no escalation: ``EvaluationSuite.computes_only``) go to
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

from todeval.evals.record_views import EvaluationRecord
from todeval.evals.subsystems import SUBSYSTEMS, SUITES, Suite, applicable_suites, suite_named
from todeval.graphs.suites import evaluation_suite
from todeval.nodes.context import Context, get_context


def suite_node(suite: Suite) -> str:
    """The node that runs ``suite``'s branch."""
    return f"run_{suite}"


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


class LocalSuitesTask(TypedDict):
    """What ``Send`` hands ``run_local_suites``: each suite's task, in running order."""

    tasks: dict[str, dict[str, Any]]


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
    by_name = {s.name: s for s in SUBSYSTEMS}
    tasks = {suite: by_name[suite].task(record, state["record"]) for suite in suites}
    context = get_context(runtime)
    together = [s for s in suites if evaluation_suite(s).computes_only(context)]
    if len(together) < 2:
        together = []
    goto = [Send(suite_node(suite), tasks[suite]) for suite in suites if suite not in together]
    if together:
        local = {suite: tasks[suite] for suite in together}
        goto.append(Send("run_local_suites", {"tasks": local}))
    return Command(update={"record_id": record.record_id, "suites": suites}, goto=goto)


def run_local_suites(payload: LocalSuitesTask, runtime: Runtime[Context]) -> dict[str, Any]:
    """The suites that only compute, one after the other (see ``EvaluationSuite.computes_only``)."""
    results: dict[str, Any] = {}
    for suite, task in payload["tasks"].items():
        results |= evaluation_suite(suite).run(task, runtime)["results"]
    return {"results": results}


def build_evaluation_graph() -> StateGraph[Any, Context, Any, Any]:
    """Plan, fan out; the branches' outputs merge into ``results`` (no join step needed)."""
    builder = StateGraph(
        EvaluationState,
        context_schema=Context,
        input_schema=EvaluationInput,
        output_schema=EvaluationOutput,
    )
    nodes = (*(suite_node(suite) for suite in SUITES), "run_local_suites")
    builder.add_node("plan_suites", plan_suites, destinations=nodes)
    # A Send target reads its own input (its part of the record), not the graph state.
    for suite in SUITES:
        branch = evaluation_suite(suite)
        builder.add_node(suite_node(suite), cast(Any, branch.run), input_schema=branch.task_schema)
    builder.add_node("run_local_suites", cast(Any, run_local_suites), input_schema=LocalSuitesTask)
    builder.add_edge(START, "plan_suites")
    for node in nodes:
        builder.add_edge(node, END)
    return builder


graph = build_evaluation_graph().compile(name="evaluation")
