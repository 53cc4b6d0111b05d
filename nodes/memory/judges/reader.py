"""The reader role: MAP's confirmation response ``r = LLM_Reader(c, A_core)`` (paper 001, §4.3).

Eq. 5 gives the reader the context ``c`` and the refined core answers ``A_core``; the Figure 9
prompt also has a ``[TASK GOAL]`` block, "task goals identified in the dialogue". Filling it
with the gold task goal would hand the reader the answer the benchmark scores, so it holds only
the intent and the slot values the context states (``task_goal_hint``). Never the gold values.

* ``local`` (:class:`LocalReader`): a template confirmation of the intent in words and, per
  slot, the value the context states, else the best-ranked one memory holds (a unit's
  ``slot``/``value`` or an answer worded ``"The {slot} was {value}."``), else the schema's
  default; other answers are quoted as they are.
* ``<provider>:<model>``: Figure 9, one call per item (:class:`LLMReader`).

The GPT-4 score of the response is its own role (:mod:`nodes.memory.judges.confirmation_score`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from pydantic import BaseModel, Field

from todeval.evals.memory_schema import MemoryUnit, MsTodTurn
from todeval.evals.memory_words import intent_in_words, slot_in_words, slot_kind
from todeval.evals.metrics.memory.slot_mention import date_in_words
from todeval.nodes.judges.roles import PromptJudge
from todeval.nodes.memory.judges.units import render_context

Memory = Sequence[str] | Sequence[MemoryUnit]


class ReaderResult(BaseModel):
    """A confirmation response and, for the local reader, the slot values it states."""

    response: str | None = Field(description="The confirmation response; None if not written.")
    slots: dict[str, str] | None = Field(
        description="Slot -> value the response states (local reader); None when unknown."
    )
    judge: str = Field(description="The judge spec that wrote it.")
    reason: str | None = Field(default=None, description="Why the response is None.")


@dataclass(frozen=True)
class ReaderRequest:
    """What the reader confirms from.

    Attributes:
        context: The new session's utterances so far.
        intent: The session's intent (given, as in MS-TOD).
        refined_memory: ``A_core`` (core answers) or the selected units, best first.
        task_goal_hint: Slot values the context states (intent capture), never gold.
        defaults: Schema defaults of optional slots, confirmed only when neither the context
            nor memory gives the slot.
        text_memory: ``refined_memory`` holds whole dialogues or summaries, not QA memory.
    """

    context: Sequence[MsTodTurn]
    intent: str
    refined_memory: Memory
    task_goal_hint: Mapping[str, str] | None = None
    defaults: Mapping[str, str] | None = None
    text_memory: bool = False


class MemoryReader(Protocol):
    """Writes the confirmation response from the context and the refined memory."""

    name: str

    def respond(self, request: ReaderRequest) -> ReaderResult:
        """The confirmation response."""
        ...


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
    """``local`` (= ``local:template``): a template confirmation of the intent and slot values."""

    name = "local"

    def respond(self, request: ReaderRequest) -> ReaderResult:
        """Context values beat memory's (the user says them now); memory's beat defaults.

        Whole dialogues or summaries (``text_memory``) are not read: a template cannot tell
        which of a dialogue's words is which slot's value, so the response is None with the
        reason rather than a confirmation that ignores the memory it was given.
        """
        if request.text_memory and request.refined_memory:
            return ReaderResult(response=None, slots=None, judge=self.name, reason=NO_TEXT_MEMORY)
        remembered, loose = memory_slots(request.refined_memory)
        slots = dict(request.defaults or {}) | remembered | dict(request.task_goal_hint or {})
        ordered = sorted(slots.items(), key=lambda item: _KIND_ORDER[slot_kind(item[0])])
        intent = request.intent
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


def render_memory(refined_memory: Memory) -> str:
    """Memory as the reader prompt shows it: a core answer (or a Q/A pair) per line."""
    lines = [
        f"Q: {item.question} A: {item.answer}" if isinstance(item, MemoryUnit) else item
        for item in refined_memory
    ]
    return "\n".join(line for line in lines if line.strip()) or "unavailable"


def render_task_goal(
    intent: str, hint: Mapping[str, str] | None, defaults: Mapping[str, str] | None = None
) -> str:
    """The ``[TASK GOAL]`` block: the intent, stated values, defaults; never gold values."""
    lines = [f"intent: {intent_in_words(intent) if intent else 'unknown'}"]
    lines += [f"{slot_in_words(slot)}: {value}" for slot, value in (hint or {}).items()]
    lines += [
        f"{slot_in_words(slot)}: {value} (default, unless the memory or the user says otherwise)"
        for slot, value in (defaults or {}).items()
        if slot not in (hint or {})
    ]
    return "\n".join(lines)


class LLMReaderOutput(BaseModel):
    """The reader prompt's JSON."""

    response: str = Field(min_length=1, description="The confirmation response to the user.")


class LLMReader(PromptJudge[LLMReaderOutput]):
    """Figure 9, one call per item; its task-goal block never holds gold values."""

    def respond(self, request: ReaderRequest) -> ReaderResult:
        """One call; which slots the free-text response states is read later (JGA's state)."""
        hint, defaults = request.task_goal_hint, request.defaults
        result = self.ask(
            conversation_history=render_context(request.context),
            task_goal=render_task_goal(request.intent, hint, defaults),
            memory=render_memory(request.refined_memory),
        )
        return ReaderResult(
            response=result.value.response.strip() if result.value else None,
            slots=None,
            judge=self.name,
            reason=result.reason if result.value is None else None,
        )
