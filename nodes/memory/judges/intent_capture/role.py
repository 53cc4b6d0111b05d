"""What intent capture returns: the intent description k_i and the values stated (MAP §4.2)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from pydantic import BaseModel, Field

from todeval.evals.memory_schema import MsTodTurn

INTENT_ROLE = "intent_capture"

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
        attributes: Sequence[str] = (),
    ) -> CapturedIntent:
        """The context's intent description and the slot values it states.

        Args:
            context: The new session's turns so far.
            intent: The session's intent (given, as in MS-TOD).
            known_values: ``(slot, value)`` pairs memory holds for the intent (candidates).
            service: The item's service, when known (picks the schema's slots).
            attributes: The intent's task attributes (the slots a value may be read for).
        """
        ...
