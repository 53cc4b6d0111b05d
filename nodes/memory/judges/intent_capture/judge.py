"""Intent capture of memory-guided dialogue planning (paper 001, §4.2).

MAP §4.2 first turns the new session's context ``c_i`` into a high-level intent description
``k_i``, the query that retrieves stored sessions. The ``intent_capture`` role:

* ``local``: the given intent in words plus the values the context states, worded like a stored
  session's description (:func:`~nodes.memory.judges.bank_builder.judge.intent_description`), so ``k_i`` and
  the bank's ``k_j`` compare like with like. A value counts as stated when it is one the user's
  earlier sessions of the intent hold (:func:`session_values`, or a categorical value of the
  schema) and the context mentions it (:func:`stated_slot_values`).
* ``<provider>:<model>``: :data:`INTENT_CAPTURE_PROMPT`.

Every result records the judge spec; a judge that cannot answer returns ``None`` with a reason.
:mod:`nodes.memory.judges.planning` re-exports this module's public names.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

from pydantic import BaseModel, Field

from evals.datasets.sgd_schema import ServiceSchema, load_sgd_schema
from evals.memory_schema import MsTodSession, MsTodTurn
from evals.metrics.memory.scores import slot_value_mentioned
from evals.metrics.memory.slot_mention import normalise
from nodes.goal_tracking.judges.goal_extraction.judge import stated_values
from nodes.judges.llm_role import LLMRole
from nodes.judges.spec import JudgeSpecError, parse_spec
from nodes.memory.judges.bank_builder.judge import (
    intent_description,
    intent_in_words,
    render_context,
)
from nodes.prompts.memory import INTENT_CAPTURE_PROMPT

__all__ = [
    "CapturedIntent",
    "IntentCapturer",
    "LLMIntentCapture",
    "LocalIntentCapture",
    "intent_capturer",
    "session_values",
    "stated_slot_values",
]

INTENT_ROLE = "intent_capture"
Turns = Sequence[MsTodTurn]
#: A number counts as stated for a slot only this close (in words) to a word of the slot's name.
NUMBER_WINDOW = 3
_GENERIC_SLOT_WORDS = frozenset({"number", "of", "num", "count", "total"})


class CapturedIntent(BaseModel):
    """The intent description ``k_i`` of the current session (§4.2, intent capture)."""

    intent: str = Field(description="The intent given to the system (SGD name), '' if none.")
    intent_description: str | None = Field(
        description="k_i: one sentence summarising the user's objective; None if not judged."
    )
    stated_values: dict[str, str] = Field(
        default_factory=dict,
        description="Slot -> value the context states (local judge only; {} from an LLM).",
    )
    judge: str = Field(description="The judge spec that produced it.")
    reason: str | None = Field(default=None, description="Why the description is None.")


class IntentCapturer(Protocol):
    """Anything that writes the intent description ``k_i`` of a session's context."""

    name: str

    def capture(
        self,
        context: Turns,
        intent: str,
        *,
        known_values: Iterable[tuple[str, str]] = (),
        service: str | None = None,
    ) -> CapturedIntent:
        """The context's intent description (``known_values``: candidate slot values)."""
        ...


def session_values(sessions: Iterable[MsTodSession], intent: str) -> list[tuple[str, str]]:
    """The ``(slot, value)`` pairs the stored sessions of ``intent`` hold, in order."""
    return [
        (slot, value)
        for session in sessions
        if session.intent == intent
        for slot, value in session.task_goal.items()
    ]


def stated_slot_values(text: str, candidates: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The candidate values ``text`` mentions, one per slot.

    Of several mentioned values of a slot the longest wins (it is the more specific one:
    "Sipan Peruvian Restaurant & Bar" over "Sipan").
    A bare number ("2", "one") is too common to trust on its own: it counts only when a word
    of its slot's name stands within :data:`NUMBER_WINDOW` words of it ("one day" fills
    ``number_of_days``, not ``number_of_rooms``).
    """
    found: dict[str, str] = {}
    for slot, value in candidates:
        if len(value) <= len(found.get(slot, "")):
            continue
        if normalise(value).isdigit() and not _number_near_slot(value, text, slot):
            continue
        if slot_value_mentioned(value, text, slot=slot):
            found[slot] = value
    return found


def _number_near_slot(value: str, text: str, slot: str) -> bool:
    words = normalise(text).split()
    wanted = normalise(value)
    stems = [w.rstrip("s")[:4] for w in slot.lower().split("_") if w not in _GENERIC_SLOT_WORDS]
    for at, word in enumerate(words):
        if word != wanted:
            continue
        window = words[max(0, at - NUMBER_WINDOW) : at + NUMBER_WINDOW + 1]
        if any(w.startswith(stem) for stem in stems for w in window):
            return True
    return False


class LocalIntentCapture:
    """``local``: the given intent in words plus the stated values, worded like ``k_j``.

    Args:
        schema: An SGD schema; its categorical values of the intent count as candidates too.
    """

    def __init__(self, schema: Mapping[str, ServiceSchema] | None = None) -> None:
        self.name = "local"
        self.schema = dict(schema) if schema is not None else None

    def capture(
        self,
        context: Turns,
        intent: str,
        *,
        known_values: Iterable[tuple[str, str]] = (),
        service: str | None = None,
    ) -> CapturedIntent:
        """The stated values and ``"The user wants to {intent} for {name} in {place}"``."""
        if not intent:
            return CapturedIntent(
                intent="",
                intent_description=None,
                judge=self.name,
                reason="the local judge needs the session's intent (MS-TOD gives it)",
            )
        text = "\n".join(t.utterance for t in context)
        stated = stated_slot_values(text, known_values)
        if self.schema is not None and service in self.schema:
            stated = stated_values(self.schema[service], intent, text) | stated
        return CapturedIntent(
            intent=intent,
            intent_description=intent_description(intent, stated),
            stated_values=stated,
            judge=self.name,
        )


class LLMIntentOutput(BaseModel):
    """The intent capture prompt's JSON."""

    intent_description: str = Field(min_length=1, description="k_i, one sentence.")


class LLMIntentCapture(LLMRole[LLMIntentOutput]):
    """The intent capture prompt through :class:`LLMJudge`."""

    role = INTENT_ROLE
    prompt = INTENT_CAPTURE_PROMPT
    output_model = LLMIntentOutput

    def capture(
        self,
        context: Turns,
        intent: str,
        *,
        known_values: Iterable[tuple[str, str]] = (),
        service: str | None = None,
    ) -> CapturedIntent:
        """One call; the model reads the values from the dialogue itself."""
        result = self.llm.invoke(
            {
                "intent": intent_in_words(intent) if intent else "unknown",
                "conversation_history": render_context(context),
            }
        )
        value = result.value
        return CapturedIntent(
            intent=intent,
            intent_description=value.intent_description.strip() if value else None,
            judge=self.name,
            reason=result.reason if value is None else None,
        )


@functools.lru_cache(maxsize=8)
def intent_capturer(spec: str = "local", schema_path: str | None = None) -> IntentCapturer:
    """The intent capture judge for ``spec``, built once per (spec, schema).

    Args:
        spec: ``"local"`` or an LLM spec.
        schema_path: An SGD ``schema.json`` whose categorical values the local judge also
            looks for.

    Raises:
        JudgeSpecError: The spec is malformed or an unknown local variant.
    """
    parsed = parse_spec(spec)
    if not parsed.is_local:
        return LLMIntentCapture(parsed)
    if parsed.variant not in (None, "default"):
        raise JudgeSpecError(f"{INTENT_ROLE}: no local variant {parsed.variant!r}")
    return LocalIntentCapture(load_sgd_schema(schema_path) if schema_path else None)
