"""Proactive slot repair subsystem: fix a confirmation's missing or wrong slots with the user.

MAP (paper 001, §4.3): compare the confirmation response r with the task goal to get the set L
of missing or wrong slots; then the agent under test and a simulated user who knows L and the
goal talk, and after every exchange a supervisor removes each resolved slot from L (Eq. 6),
until L is empty or ``Context.max_repair_turns`` agent turns have been spent::

    find_missing_slots -> (L empty?) -> agent_turn -> user_turn -> supervise -> (loop)
                                     -> score_repair

One thread per item. The three roles are judge specs in :class:`~graphs.context.Context`
(``repair_agent``, ``user_simulator``, ``supervisor_judge``; the supervisor also finds L); the
simulated user's persona comes with the item (see :class:`~nodes.simulation.Persona`). Each
repair turn is three super-steps, so a run needs a ``recursion_limit`` of at least
``3 * max_repair_turns + 3`` (LangGraph's default, 10007, is ample).

**DTE** (Dialogue Turn Efficiency, "the number of turns required to complete a task", §5.1) is
counted in system turns from the confirmation on: the confirmation response is turn 1 and every
repair turn of the agent adds one, so a confirmation with every slot right has DTE 1 and a
failed item has ``1 + max_repair_turns``. Paper 001 does not spell the count out; this reading
fits its tables (Mistral-7B with MAP: JGA 0.80, S.R. 1.00, DTE 1.21, i.e. about one repair
turn for each of the fifth of items whose confirmation was wrong). ``repair_turns`` (DTE - 1)
is reported too, for the other reading. **Success** (S.R.) is L empty at the end.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired

from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from graphs.context import Context
from nodes.slot_repair import (
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


class RepairTurn(TypedDict):
    """One utterance of the repair exchange."""

    speaker: Literal["user", "system"]
    utterance: str
    asked_slots: NotRequired[list[str]]
    """System turns: the slots of L the turn asks about."""
    revealed_slots: NotRequired[dict[str, str]]
    """User turns: slot -> value the reply states."""
    resolved_slots: NotRequired[list[str]]
    """User turns: the slots the supervisor removed from L after this exchange."""


class SlotRepairInput(TypedDict):
    """An item: the session so far, its gold task goal and the confirmation response r."""

    context: list[dict[str, str]]
    """The turns before the confirmation (``speaker``: user|system, ``utterance``)."""
    task_goal: dict[str, str]
    response: str
    intent: NotRequired[str | None]
    persona: NotRequired[dict[str, Any]]
    """The simulated user's :class:`~nodes.simulation.Persona` fields; default cooperative."""


class SlotRepairOutput(TypedDict):
    """L before and after, the repair exchange, DTE, success and who judged."""

    initial_missing: list[str] | None
    """L as found from the response (None when the supervisor could not judge)."""
    remaining: list[str] | None
    turns: list[RepairTurn]
    repair_turns: int
    dte: int | None
    """1 (the confirmation) + ``repair_turns``; None when a judge failed."""
    success: bool | None
    """L empty at the end; None when a judge failed."""
    judges: dict[str, str]
    """Spec per role: ``supervisor_judge``, ``repair_agent``, ``user_simulator``."""
    user_persona: dict[str, Any]
    """The simulated user's persona, every field filled in."""
    max_repair_turns: int
    reason: str | None
    """Why the loop stopped early or a result is None."""


class SlotRepairState(SlotRepairInput, SlotRepairOutput, total=False):
    """Everything the graph's nodes read and write."""

    user_stopped: bool


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


graph = build_slot_repair_graph().compile(name="slot_repair")
