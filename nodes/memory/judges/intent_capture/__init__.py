"""The intent capture role of memory-guided dialogue planning (MAP, paper 001, §4.2).

MAP §4.2 turns the new session's context ``c_i`` into an intent description ``k_i``, the query
that retrieves stored sessions.

* ``local`` (:class:`~.local.LocalIntentCapture`): the given intent in words plus the values
  the context states, worded like a stored session's description, so ``k_i`` and the bank's
  ``k_j`` compare like with like.
* ``<provider>:<model>`` (:class:`LLMIntentCapture`): the intent capture prompt (App. A.2).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from pydantic import BaseModel, Field

from todeval.evals.datasets.sgd_schema import ServiceSchema
from todeval.evals.memory_schema import MsTodTurn
from todeval.evals.memory_words import intent_in_words
from todeval.nodes.judges.roles import PromptJudge
from todeval.nodes.memory.judges.units import render_context

Turns = Sequence[MsTodTurn]


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


@dataclass(frozen=True)
class CaptureRequest:
    """What intent capture reads.

    Attributes:
        context: The new session's turns so far.
        intent: The session's intent (given, as in MS-TOD).
        known_values: ``(slot, value)`` pairs memory holds for the intent (candidates).
        service: The item's service, when known (picks the schema's slots).
        attributes: The intent's task attributes (the slots a value may be read for).
        schema: An SGD schema, when the run has one: its categorical values of the
            intent count as candidates too, and its slot specs tell flags and counts apart.
    """

    context: Turns
    intent: str
    known_values: Iterable[tuple[str, str]] = ()
    service: str | None = None
    attributes: Sequence[str] = ()
    schema: Mapping[str, ServiceSchema] | None = None


class IntentCapturer(Protocol):
    """Anything that writes the intent description ``k_i`` of a session's context."""

    name: str

    def capture(self, request: CaptureRequest) -> CapturedIntent:
        """The context's intent description and the slot values it states."""
        ...


class LLMIntentOutput(BaseModel):
    """The intent capture prompt's JSON."""

    intent_description: str = Field(min_length=1, description="k_i, one sentence.")


class LLMIntentCapture(PromptJudge[LLMIntentOutput]):
    """The intent capture prompt, one call per item."""

    def capture(self, request: CaptureRequest) -> CapturedIntent:
        """One call; the model reads the values from the dialogue itself."""
        intent = request.intent
        result = self.ask(
            intent=intent_in_words(intent) if intent else "unknown",
            conversation_history=render_context(request.context),
        )
        value = result.value
        return CapturedIntent(
            intent=intent,
            intent_description=value.intent_description.strip() if value else None,
            judge=self.name,
            reason=result.reason if value is None else None,
        )
