"""QA memory units in words (MAP / MS-TOD, paper 001, §3.2, App. B.4, Fig. 13).

A stored session becomes one unit per task-goal slot: the intent described in words, a
third-person question about the slot and its answer. The reader, the judger and the planning
judges render contexts, slot values and units the same way through these helpers.
:func:`select_units` picks the units refinement keeps (MAP's top 5), one per slot, the context's
session first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from todeval.evals.memory_schema import MemoryUnit, MsTodSession, MsTodTurn
from todeval.evals.memory_words import (
    intent_in_words,
    salient_values,
    slot_in_words,
    slot_kind,
)
from todeval.evals.metrics.memory.slot_mention import slot_value_mentioned

#: How the paper's prompts name the two sides of the dialogue.
SPEAKER_NAMES = {"user": "user", "system": "assistant"}


def render_context(context: Sequence[MsTodTurn]) -> str:
    """Turns as the prompts show them: one ``"user: ..."``/``"assistant: ..."`` per line."""
    return "\n".join(f"{SPEAKER_NAMES[t.speaker]}: {t.utterance}" for t in context)


def render_slot_values(values: Mapping[str, str]) -> str:
    """Slot values as the prompts show a task goal: ``"slot: value"`` per line, else ``"none"``."""
    return "\n".join(f"{slot}: {value}" for slot, value in values.items()) or "none"


def render_slot_names(slots: Sequence[str]) -> str:
    """Slots the repair prompts name: ``"- slot (slot in words)"`` per line, else ``"(none)"``."""
    return "\n".join(f"- {slot} ({slot_in_words(slot)})" for slot in slots) or "(none)"


def intent_description(intent: str, task_goal: Mapping[str, str]) -> str:
    """The local intent description ``k_i`` of a session.

    Example: ``"The user wants to reserve restaurant for Gen Korean BBQ House in Milpitas"``.
    """
    text = f"The user wants to {intent_in_words(intent)}"
    for slot, value in salient_values(task_goal):
        text += f" {'in' if slot_kind(slot) == 'place' else 'for'} {value}"
    return text


def slot_question(intent: str, slot: str) -> str:
    """The local question ``q_ij`` about one task attribute."""
    return f"What {slot_in_words(slot)} did the user want for the {intent_in_words(intent)}?"


def slot_answer(slot: str, value: str) -> str:
    """The local answer ``a_ij`` stating one slot value."""
    return f"The {slot_in_words(slot)} was {value}."


def memory_unit_id(individual_id: str, session_id: str, slot: str) -> str:
    """The id of a slot's unit: ``individual/session/slot`` (see :class:`MemoryUnit`)."""
    return f"{individual_id}/{session_id}/{slot}"


def local_memory_units(individual_id: str, session: MsTodSession) -> list[MemoryUnit]:
    """The task-goal (oracle) QA memory units of a stored session: one per task-goal slot."""
    return slot_units(individual_id, session, session.task_goal)


def slot_units(
    individual_id: str, session: MsTodSession, values: Mapping[str, str]
) -> list[MemoryUnit]:
    """A stored session's QA memory units holding ``values``: one per slot, in their order."""
    description = intent_description(session.intent, values)
    return [
        MemoryUnit(
            unit_id=memory_unit_id(individual_id, session.session_id, slot),
            individual_id=individual_id,
            session_id=session.session_id,
            intent=session.intent,
            intent_description=description,
            question=slot_question(session.intent, slot),
            answer=slot_answer(slot, value),
            slot=slot,
            value=value,
        )
        for slot, value in values.items()
    ]


def anchor_session(ranked: Sequence[MemoryUnit], stated: Mapping[str, str]) -> str | None:
    """The stored session the context points at.

    The session with the most units whose value the context states (the re-entry line names
    "Long Beach"; the session that went to Long Beach is the one meant), the better-ranked one
    on a tie; without such evidence, the session of the best-ranked unit.
    """
    if not ranked:
        return None
    support: dict[str, int] = {}
    for unit in ranked:
        if unit.slot is None or unit.value is None or unit.slot not in stated:
            continue
        if _same_value(stated[unit.slot], unit.value, unit.slot):
            support[unit.session_id] = support.get(unit.session_id, 0) + 1
    if not support:
        return ranked[0].session_id
    order = list(dict.fromkeys(unit.session_id for unit in ranked))
    return max(support, key=lambda session: (support[session], -order.index(session)))


def select_units(
    ranked: Sequence[MemoryUnit],
    limit: int,
    *,
    stated: Mapping[str, str],
    missing: Sequence[str] | None = None,
    anchor: str | None = None,
    intent: str | None = None,
) -> list[MemoryUnit]:
    """The units kept for refinement: ``limit`` of them, each telling the reader something new.

    Walking the ranking (Eq. 4's order), a unit is skipped when its slot already has a value:
    one the context states, or one a unit kept before gives (a second value for a slot is a
    contradiction, not information). Units of a slot still missing (``missing``, the query
    q_miss asks for) come before the others, and among those the ``anchor`` session's units
    (:func:`anchor_session`) before other sessions'. Units of another intent than ``intent``
    are never kept: they belong to another task. Units that name no slot (MS-TOD's own QA
    memory) are kept in rank order.
    """
    open_slots = set(missing) if missing is not None else None
    if intent:
        ranked = [unit for unit in ranked if not unit.intent or unit.intent == intent]

    def priority(position: int, unit: MemoryUnit) -> tuple[bool, bool, int]:
        asked = open_slots is None or unit.slot is None or unit.slot in open_slots
        return (not asked, unit.session_id != anchor, position)

    ordered = sorted(enumerate(ranked), key=lambda pair: priority(*pair))
    kept: list[MemoryUnit] = []
    filled = set(stated)
    for _, unit in ordered:
        if unit.slot is not None and unit.slot in filled:
            continue
        kept.append(unit)
        if unit.slot is not None:
            filled.add(unit.slot)
        if len(kept) >= limit:
            break
    return kept


def _same_value(stated: str, stored: str, slot: str) -> bool:
    if stated.strip().lower() == stored.strip().lower():
        return True
    return slot_value_mentioned(stored, stated, slot=slot)
