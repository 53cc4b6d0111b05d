"""The goal-extraction judge role: ATOD's stage ``(u_t, c_t) -> G_t`` (paper 000, Section 5.2).

Given one utterance and the few before it, return the user goals it raises or refers to.

* **With a schema** a goal is named ``(service, intent)``: a small MLP scores every intent from
  relational MiniLM features (:mod:`.features`). No feature names a service, so it works
  zero-shot on services absent from SGD train; categorical slot values the user states are
  filled in (the SGD frames are never read).
* **Without a schema** a user request becomes a goal whose ``description`` is the normalised
  request clause; acknowledgements, answers and small talk yield nothing.

Only user utterances raise goals (as in SGD); a system utterance yields ``[]`` but still
matters as context. This module holds the role's types (the role is in
:mod:`nodes.goal_tracking.roles`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from todeval.evals.schema import Dialogue

CARDS = Path(__file__).parent / "validity.json"
"""The local goal tracker's validity card (dGCR against recorded runs' rewards; ``make
validity``, ``scripts/validity_cards.py``)."""

CONTEXT_UTTERANCES = 4
"""Utterances before the current one that the extractor reads as context ``c_t``."""


@dataclass(frozen=True)
class Utterance:
    """One utterance of the dialogue, numbered by turn."""

    turn: int
    speaker: Literal["USER", "SYSTEM"]
    text: str


@dataclass(frozen=True)
class CandidateGoal:
    """A goal the utterance raises or refers to (ATOD's candidate ``g_t^(i)``).

    Attributes:
        description: Standardised text of the goal (ATOD's ``goal_description``).
        service: Schema service, e.g. ``Restaurants_2``; ``""`` without a schema.
        intent: Schema intent, e.g. ``ReserveRestaurant``; ``""`` without a schema.
        slots: Slot values the utterance states (categorical slots only).
        confidence: The extractor's probability that the goal is real, in [0, 1].
        evidence: The text the goal was read from.
    """

    description: str
    service: str
    intent: str
    slots: dict[str, str] = field(default_factory=dict)
    confidence: float = 1.0
    evidence: str = ""


class GoalExtractor(Protocol):
    """Anything that turns an utterance and its context into candidate goals."""

    name: str

    def prepare(self, texts: Sequence[str]) -> None:
        """Batch-embed a chunk's utterances (may do nothing)."""
        ...

    def extract(self, utterance: Utterance, context: Sequence[Utterance]) -> list[CandidateGoal]:
        """The goals ``utterance`` raises, given the utterances before it."""
        ...


def dialogue_utterances(dialogue: Dialogue) -> list[Utterance]:
    """The dialogue's utterances in order: each turn's user message, then its response."""
    utterances = []
    for turn in dialogue.turns:
        utterances.append(Utterance(turn.turn_number, "USER", turn.user_msg))
        if turn.response:
            utterances.append(Utterance(turn.turn_number, "SYSTEM", turn.response))
    return utterances


def in_context(
    utterances: Sequence[Utterance], context_size: int = CONTEXT_UTTERANCES
) -> list[tuple[Utterance, Sequence[Utterance]]]:
    """Every utterance with the ``context_size`` before it, its context ``c_t``."""
    return [
        (utterance, utterances[max(0, k - context_size) : k])
        for k, utterance in enumerate(utterances)
    ]


def extract_dialogue(
    extractor: GoalExtractor,
    utterances: Sequence[Utterance],
    context_size: int = CONTEXT_UTTERANCES,
) -> list[list[CandidateGoal]]:
    """Candidate goals of every utterance, each read with the ``context_size`` before it."""
    return [
        extractor.extract(utterance, context)
        for utterance, context in in_context(utterances, context_size)
    ]
