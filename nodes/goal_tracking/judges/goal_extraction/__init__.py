r"""The goal-extraction judge role: ATOD's stage ``(u_t, c_t) -> G_t`` (paper 000, Section 5.2).

Given one utterance and the few before it, return the user goals it raises or refers to, as
:class:`CandidateGoal`\\ s for the goal tracker's existence check.

* **With a schema** (SGD ``schema.json`` form) a goal is named ``(service, intent)``. A small MLP
  (:mod:`nodes.judges.classifier`) scores every intent of the schema from relational MiniLM features
  (:mod:`nodes.goal_tracking.judges.goal_extraction.features`): cosines of the utterance, the
  system's previous utterance and the user's earlier ones to the intent, service and slot
  descriptions, ranks and margins among the intents, and cue flags. Because no feature names a
  service, it works zero-shot on services absent from its training data (SGD train);
  ``scripts/train_goal_extractor.py`` trains it. Categorical slot values the user states are filled
  in; nothing else (the SGD frames are never read).
* **Without a schema** a user request ("I need a hotel in Chicago") becomes a goal whose
  ``description`` is the request clause, normalised, and ``service``/``intent`` are empty;
  acknowledgements, answers to the system's questions and small talk yield nothing.

The role is declared in :mod:`nodes.goal_tracking.roles` (``GOAL_EXTRACTION``): ``local``
(:class:`~.local.LocalGoalExtraction`, one extractor per schema) and ``<provider>:<model>``
(:class:`~.llm.LLMGoalTracking`: extraction, existence check and status in one turn-update call,
with the graph-evolution and audit prompts beside it). This module holds the role's types.

Only user utterances raise goals (as in SGD, where goals are the user's): a system utterance
yields ``[]``; it still matters as context (an offer the user accepts starts a booking).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from todeval.evals.schema import Dialogue

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


def extract_dialogue(
    extractor: GoalExtractor,
    utterances: Sequence[Utterance],
    context_size: int = CONTEXT_UTTERANCES,
) -> list[list[CandidateGoal]]:
    """Candidate goals of every utterance, each read with the ``context_size`` before it."""
    return [
        extractor.extract(utterance, utterances[max(0, k - context_size) : k])
        for k, utterance in enumerate(utterances)
    ]
