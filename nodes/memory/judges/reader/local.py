"""The local reader: a template confirmation of intent and slot values.

Per slot it states the value the context gives, else the best-ranked value memory holds.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from todeval.evals.memory_schema import MemoryUnit, MsTodTurn
from todeval.evals.memory_words import intent_in_words, slot_in_words, slot_kind
from todeval.evals.metrics.memory.slot_mention import date_in_words
from todeval.nodes.memory.judges.reader.role import Memory, ReaderResult

#: A local answer ``"The {slot in words} was {value}."`` (``slot_answer`` of the memory units).
_ANSWER = re.compile(r"^\s*the (?P<slot>[a-z0-9 ]+?) was (?P<value>.+?)\.?\s*$", re.IGNORECASE)

#: An unrefined unit written as text: ``"Question: ... Answer: ..."`` or ``"Q: ... A: ..."``.
_QA_PAIR = re.compile(r"^\s*(?:question|q):.*?\b(?:answer|a):\s*(?P<answer>.*)$", re.I | re.S)

_KIND_ORDER = {"name": 0, "place": 1, "other": 2}

NO_TEXT_MEMORY = (
    "the local reader reads QA memory only; a setting that gives it whole dialogues or "
    "summaries needs an LLM reader (--reader PROVIDER:MODEL)"
)

_ISO_DATE = re.compile(r"^(?P<year>\d{4})-(?P<month>\d{2})-(?P<day>\d{2})$")


def memory_slots(refined_memory: Memory) -> tuple[dict[str, str], list[str]]:
    """Slot values memory holds (first, i.e. best-ranked, per slot) and unreadable answers.

    A template reader is not distracted by questions: of an unrefined ``"Question: ...
    Answer: ..."`` text only the answer is read.

    Returns:
        ``(slot -> value, answers that state no single slot value)``.
    """
    slots: dict[str, str] = {}
    loose: list[str] = []
    for item in refined_memory:
        if isinstance(item, MemoryUnit) and item.slot and item.value:
            slots.setdefault(item.slot, item.value)
            continue
        answer = item.answer if isinstance(item, MemoryUnit) else item
        pair = _QA_PAIR.match(answer)
        answer = pair["answer"] if pair else answer
        match = _ANSWER.match(answer)
        if match:
            slots.setdefault("_".join(match["slot"].lower().split()), match["value"].strip())
        elif answer.strip():
            loose.append(answer.strip())
    return slots, loose


def _slot_phrase(slot: str, value: str) -> str:
    """``the time 12:15 pm``; a flag reads ``shared ride (yes)`` / ``no shared ride``."""
    flag = value.strip().lower()
    if flag == "true":
        return f"{slot_in_words(slot)} (yes)"
    if flag in ("false", "none"):
        return f"no {slot_in_words(slot)}"
    return f"the {slot_in_words(slot)} {in_words(value)}"


def in_words(value: str) -> str:
    """A value as a person says it: an ISO date (a schema default) as "March 1st"."""
    iso = _ISO_DATE.match(value.strip())
    if iso is None or not 1 <= int(iso["month"]) <= 12:
        return value
    return date_in_words(int(iso["month"]), int(iso["day"]))


def _listing(parts: Sequence[str]) -> str:
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"


class LocalReader:
    """``local``: a template confirmation of the intent and the slot values it has."""

    def __init__(self) -> None:
        self.name = "local"

    def respond(
        self,
        context: Sequence[MsTodTurn],
        intent: str,
        refined_memory: Memory,
        task_goal_hint: Mapping[str, str] | None = None,
        *,
        defaults: Mapping[str, str] | None = None,
        text_memory: bool = False,
    ) -> ReaderResult:
        """Context values beat memory's (the user says them now); memory's beat defaults.

        Whole dialogues or summaries (``text_memory``) are not read: a template cannot tell
        which of a dialogue's words is which slot's value, so the response is None with the
        reason rather than a confirmation that ignores the memory it was given.
        """
        if text_memory and refined_memory:
            return ReaderResult(response=None, slots=None, judge=self.name, reason=NO_TEXT_MEMORY)
        remembered, loose = memory_slots(refined_memory)
        slots = dict(defaults or {}) | remembered | dict(task_goal_hint or {})
        ordered = sorted(slots.items(), key=lambda item: _KIND_ORDER[slot_kind(item[0])])
        task = f"you'd like to {intent_in_words(intent)}" if intent else "you'd like this"
        if ordered:
            stated = _listing([_slot_phrase(s, v) for s, v in ordered])
            response = f"Just to confirm, {task} with {stated}."
        else:
            response = f"Just to confirm, {task}."
        if loose:
            response += f" I also have on record: {' '.join(loose)}"
        question = " Is that correct?" if ordered else " Could you give me the details?"
        return ReaderResult(response=response + question, slots=dict(ordered), judge=self.name)
