"""Memory-active subsystem: answer a returning user from their memory bank, then repair slots.

MAP (paper 001): memory-guided dialogue planning (§4.2) writes a confirmation response from the
user's earlier sessions, and the proactive response strategy (§4.3) fixes what it got wrong with
the user::

    capture_intent -> activate_memory -> query_missing_slots -> judge_memory -> refine_memory
        -> write_response -> slot_repair (subgraph; only when the input has a task goal)

One thread per evaluation item. The memory bank (``Context.memory_bank_*``) must already hold
the user's units (``todeval memory eval`` builds it from the benchmark's sessions). The repair
loop runs as the ``slot_repair`` subgraph inside a wrapper node, on this graph's checkpointer,
so its state is inspectable with ``get_state(config, subgraphs=True)``.
"""

from __future__ import annotations

from typing import Any, NotRequired

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict

from graphs.context import Context, get_context
from graphs.slot_repair import SlotRepairOutput
from graphs.slot_repair import graph as slot_repair_graph
from nodes.memory_active import (
    activate_memory,
    capture_intent,
    judge_memory,
    query_missing_slots,
    refine_memory,
    write_response,
)


class MemoryActiveInput(TypedDict):
    """An item: whose memory, the intent, the new session's context and (optionally) the goal."""

    individual_id: str
    intent: str
    """The item's intent (given to the system, as in MS-TOD)."""
    service: NotRequired[str | None]
    """The item's service (SGD ``Hotels_4``), when known: picks the schema's slots for it."""
    context: list[dict[str, str]]
    """The new session so far: ``[{speaker: user|system, utterance}]``, the user's turn last."""
    task_goal: NotRequired[dict[str, str]]
    """Gold slot values; read only by the repair loop (and by scoring), never by the reader."""
    persona: NotRequired[dict[str, Any]]
    """The simulated user's persona for the repair loop (see :class:`nodes.simulation.Persona`)."""


class MemoryActiveOutput(TypedDict):
    """What planning found, the confirmation response, and the repair loop's outcome."""

    intent_description: str | None
    missing_slots: list[str] | None
    missing_query: str | None
    activated: list[dict[str, Any]]
    """:class:`~evals.memory_schema.ScoredUnit` s, best ``final_score`` first."""
    selected: list[str]
    """Unit ids kept after re-ranking (top ``memory_selected``)."""
    refined: list[str]
    response: str | None
    response_slots: dict[str, str] | None
    repair: SlotRepairOutput | None
    judges: dict[str, str]
    reasons: list[str]


class MemoryActiveState(MemoryActiveInput, MemoryActiveOutput, total=False):
    """Everything the graph's nodes read and write."""

    stated_values: dict[str, str]


def run_slot_repair(state: MemoryActiveState, runtime: Runtime[Context]) -> dict[str, Any]:
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


def build_memory_active_graph() -> StateGraph[Any, Context, Any, Any]:
    """Plan with memory, respond, repair."""
    builder = StateGraph(
        MemoryActiveState,
        context_schema=Context,
        input_schema=MemoryActiveInput,
        output_schema=MemoryActiveOutput,
    )
    steps = [
        ("capture_intent", capture_intent),
        ("activate_memory", activate_memory),
        ("query_missing_slots", query_missing_slots),
        ("judge_memory", judge_memory),
        ("refine_memory", refine_memory),
        ("write_response", write_response),
        ("slot_repair", run_slot_repair),
    ]
    previous = START
    for name, node in steps:
        builder.add_node(name, node)
        builder.add_edge(previous, name)
        previous = name
    builder.add_edge(previous, END)
    return builder


graph = build_memory_active_graph().compile(name="memory_active")
