"""Memory subsystem (MAP / MS-TOD, paper 001): the memory-active policy and slot repair.

MAP (paper 001): memory-guided dialogue planning (§4.2) writes a confirmation response from the
user's earlier sessions, and the proactive response strategy (§4.3) fixes what it got wrong with
the user::

    capture_intent -> activate_memory -> query_missing_slots -> judge_memory -> refine_memory
        -> write_response -> score_confirmation
        -> slot_repair (subgraph; only when the input has a task goal)

``score_confirmation`` gives the response its GPT-4 score (Figure 11, ``Context.scorer_judge``;
null with the reason under a local spec). ``Context.memory_setting`` runs one of the paper's
comparison settings through the same nodes instead of MAP (:mod:`nodes.memory.settings`).

One thread per evaluation item. The memory bank (``Context.memory_bank_*``) must already hold
the user's units (``todeval memory eval`` builds it from the benchmark's sessions). The repair
loop runs as the ``slot_repair`` subgraph inside a wrapper node, on this graph's checkpointer,
so its state is inspectable with ``get_state(config, subgraphs=True)``.

``slot_repair``: fix a confirmation's missing or wrong slots with the user.

MAP (paper 001, §4.3): compare the confirmation response r with the task goal to get the set L
of missing or wrong slots; then the agent under test and a simulated user who knows L and the
goal talk, and after every exchange a supervisor removes each resolved slot from L (Eq. 6),
until L is empty or ``Context.max_repair_turns`` agent turns have been spent::

    find_missing_slots -> (L empty?) -> agent_turn -> user_turn -> supervise -> (loop)
                                     -> score_repair

One thread per item. The three roles are judge specs in :class:`~nodes.context.Context`
(``repair_agent``, ``user_simulator``, ``supervisor_judge``; the supervisor also finds L); the
simulated user's persona comes with the item (see
:class:`~nodes.simulation.users.Persona`). Each repair turn is three super-steps, so
a run needs a ``recursion_limit`` of at least ``3 * max_repair_turns + 3`` (LangGraph's default,
10007, is ample).

**DTE** (Dialogue Turn Efficiency, "the number of turns required to complete a task", §5.1) is
counted in system turns from the confirmation on: the confirmation response is turn 1 and every
repair turn of the agent adds one, so a confirmation with every slot right has DTE 1 and a
failed item has ``1 + max_repair_turns``. Paper 001 does not spell the count out; this reading
fits its tables (Mistral-7B with MAP: JGA 0.80, S.R. 1.00, DTE 1.21, i.e. about one repair
turn for each of the fifth of items whose confirmation was wrong). ``repair_turns`` (DTE - 1)
is reported too, for the other reading. **Success** (S.R.) is L empty at the end.
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict

from todeval.evals.memory_schema import Individual
from todeval.evals.record_views import MemoryItem
from todeval.nodes.context import Context, get_context
from todeval.nodes.memory.bank import fill_bank
from todeval.nodes.memory.memory_active import (
    activate_memory,
    capture_intent,
    judge_memory,
    query_missing_slots,
    refine_memory,
    write_response,
)
from todeval.nodes.memory.scoring import score_confirmation
from todeval.nodes.memory.slot_repair import (
    agent_turn,
    find_missing_slots,
    route_after_agent_turn,
    route_after_find_missing_slots,
    route_after_supervise,
    route_after_user_turn,
    score_repair,
    supervise,
    user_turn,
)
from todeval.nodes.memory.state import (
    MemoryInput,
    MemoryOutput,
    MemoryState,
    SlotRepairInput,
    SlotRepairOutput,
    SlotRepairState,
)


def build_slot_repair_graph() -> StateGraph[Any, Context, Any, Any]:
    """Find L, then loop agent -> user -> supervisor until L is empty or turns run out."""
    builder = StateGraph(
        SlotRepairState,
        context_schema=Context,
        input_schema=SlotRepairInput,
        output_schema=SlotRepairOutput,
    )
    builder.add_node("find_missing_slots", find_missing_slots)
    builder.add_node("agent_turn", agent_turn)
    builder.add_node("user_turn", user_turn)
    builder.add_node("supervise", supervise)
    builder.add_node("score_repair", score_repair)
    builder.add_edge(START, "find_missing_slots")
    builder.add_conditional_edges("find_missing_slots", route_after_find_missing_slots)
    builder.add_conditional_edges("agent_turn", route_after_agent_turn)
    builder.add_conditional_edges("user_turn", route_after_user_turn)
    builder.add_conditional_edges("supervise", route_after_supervise)
    builder.add_edge("score_repair", END)
    return builder


slot_repair_graph = build_slot_repair_graph().compile(name="slot_repair")


def run_slot_repair(state: MemoryState, runtime: Runtime[Context]) -> dict[str, Any]:
    """The slot-repair subgraph on the confirmation (skipped without a task goal or response)."""
    if not state.get("task_goal") or not state.get("response"):
        return {"repair": None}
    output = slot_repair_graph.invoke(
        {
            "context": state["context"],
            "task_goal": state["task_goal"],
            "response": state["response"],
            "intent": state["intent"],
            "persona": state.get("persona") or {},
        },
        context=get_context(runtime),
    )
    return {"repair": output}


def build_memory_graph() -> StateGraph[Any, Context, Any, Any]:
    """Plan with memory, respond, repair."""
    builder = StateGraph(
        MemoryState,
        context_schema=Context,
        input_schema=MemoryInput,
        output_schema=MemoryOutput,
    )
    steps = [
        ("capture_intent", capture_intent),
        ("activate_memory", activate_memory),
        ("query_missing_slots", query_missing_slots),
        ("judge_memory", judge_memory),
        ("refine_memory", refine_memory),
        ("write_response", write_response),
        ("score_confirmation", score_confirmation),
        ("slot_repair", run_slot_repair),
    ]
    previous = START
    for name, node in steps:
        builder.add_node(name, node)
        builder.add_edge(previous, name)
        previous = name
    builder.add_edge(previous, END)
    return builder


graph = build_memory_graph().compile(name="memory")


class MemoryTask(TypedDict):
    """What the evaluation hands memory: the item and the user's earlier sessions (JSON)."""

    memory: dict[str, Any]


def run_memory(payload: MemoryTask, runtime: Runtime[Context]) -> dict[str, Any]:
    """The evaluation's memory branch: the memory-active policy on the record's item.

    The user's earlier sessions go into their bank first.
    """
    context = get_context(runtime)
    memory = MemoryItem.model_validate(payload["memory"])
    fill_bank(
        context,
        Individual(individual_id=memory.individual_id, sessions=memory.sessions, eval=[]),
    )
    item = memory.item
    output = graph.invoke(
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
