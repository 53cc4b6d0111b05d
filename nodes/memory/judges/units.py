"""QA memory units in words (MAP / MS-TOD, paper 001, §3.2, App. B.4, Fig. 13).

A stored session becomes one unit per task-goal slot: the intent described in words, a
third-person question about the slot and its answer. The reader, the judger and the planning
judges render contexts and units the same way through these helpers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from evals.memory_schema import MemoryUnit, MsTodSession, MsTodTurn
from evals.memory_words import (
    intent_in_words,
    salient_values,
    slot_in_words,
    slot_kind,
)

#: How the paper's prompts name the two sides of the dialogue.
SPEAKER_NAMES = {"user": "user", "system": "assistant"}


def render_context(context: Sequence[MsTodTurn]) -> str:
    """Turns as the prompts show them: one ``"user: ..."``/``"assistant: ..."`` per line."""
    return "\n".join(f"{SPEAKER_NAMES[t.speaker]}: {t.utterance}" for t in context)


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
    """The local QA memory units of a stored session: one per task-goal slot.

    Args:
        individual_id: Whose memory the session is.
        session: The stored session; only its intent and task goal are read.

    Returns:
        One unit per slot of ``session.task_goal``, in the goal's order; empty for an empty goal.
    """
    description = intent_description(session.intent, session.task_goal)
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
        for slot, value in session.task_goal.items()
    ]
