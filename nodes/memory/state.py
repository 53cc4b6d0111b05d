"""State of the memory graphs (MAP / MS-TOD, paper 001): memory-active policy and slot repair.

Kept below ``graphs/`` so the nodes can import their own state types (imports point down).
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired

from typing_extensions import TypedDict


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
    """The simulated user's ``Persona`` fields (:mod:`nodes.simulation.users`);
    default cooperative."""


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


class MemoryInput(TypedDict):
    """An item: whose memory, the intent, the new session's context and (optionally) the goal."""

    individual_id: str
    intent: str
    """The item's intent (given to the system, as in MS-TOD)."""
    service: NotRequired[str | None]
    """The item's service (SGD ``Hotels_4``), when known: picks the schema's slots for it."""
    context: list[dict[str, str]]
    """The new session so far: ``[{speaker: user|system, utterance}]``, the user's turn last."""
    task_goal: NotRequired[dict[str, str]]
    """Gold slot values; read only by the repair loop and the GPT-4 scorer, never by the
    planning nodes or the reader."""
    reference_response: NotRequired[str]
    """The dataset's confirmation; read only by the GPT-4 scorer (Figure 11)."""
    relevant_session_ids: NotRequired[list[str]]
    """The sessions holding the item's values; read only by the ``oracle`` settings."""
    persona: NotRequired[dict[str, Any]]
    """The simulated user's persona for the repair loop (``Persona`` of
    :mod:`nodes.simulation.users`)."""


class MemoryOutput(TypedDict):
    """What planning found, the confirmation response, and the repair loop's outcome."""

    intent_description: str | None
    missing_slots: list[str] | None
    missing_query: str | None
    activated: list[dict[str, Any]] | None
    """:class:`~evals.memory_schema.ScoredUnit` s, best ``final_score`` first; None when the
    setting ranks nothing (no memory, all of it, or the oracle's)."""
    selected: list[str]
    """Unit ids given to the reader (after re-ranking: the top ``memory_selected``)."""
    refined: list[str]
    response: str | None
    response_slots: dict[str, str] | None
    dialogue_state: NotRequired[dict[str, str] | None]
    """The predicted dialogue state (JGA's; :mod:`nodes.memory.dialogue_state`)."""
    state_source: NotRequired[str]
    """Where it came from: ``reader``, ``response`` (read off a free-text one) or ``none``."""
    ambiguous_slots: NotRequired[list[str]]
    gpt4_score: NotRequired[dict[str, Any]]
    """Figure 11's score: ``score`` (1-10 or None), ``rationale``, ``judge``, ``reason``."""
    repair: SlotRepairOutput | None
    judges: dict[str, str]
    reasons: list[str]


class MemoryState(MemoryInput, MemoryOutput, total=False):
    """Everything the graph's nodes read and write."""

    stated_values: dict[str, str]
