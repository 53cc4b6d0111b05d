r"""The goal-extraction judge role: ATOD's stage ``(u_t, c_t) -> G_t`` (paper 000, Section 5.2).

Given one utterance and the few before it, return the user goals it raises or refers to, as
:class:`CandidateGoal`\\ s for the goal tracker's existence check.

* **With a schema** (SGD ``schema.json`` form) a goal is named ``(service, intent)``. A small
  MLP (:mod:`nodes.judges.classifier`) scores every intent of the schema from relational
  MiniLM features (:mod:`nodes.goal_tracking.judges.goal_extraction.features`): cosines of the utterance, the
  system's previous utterance and the user's earlier ones to the intent, service and slot
  descriptions, ranks and margins among the intents, and cue flags. Because no feature names
  a service, it works zero-shot on services absent from its training data (SGD train);
  ``scripts/train_goal_extractor.py`` trains it. Categorical slot values the user states are
  filled in; nothing else (the SGD frames are never read).
* **Without a schema** a user request ("I need a hotel in Chicago") becomes a goal whose
  ``description`` is the request clause, normalised, and ``service``/``intent`` are empty;
  acknowledgements, answers to the system's questions and small talk yield nothing.

Only user utterances raise goals (as in SGD, where goals are the user's): a system utterance
yields ``[]``; it still matters as context (an offer the user accepts starts a booking).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

import numpy as np

from evals.datasets.sgd_schema import ServiceSchema, load_sgd_schema
from evals.schema import Dialogue
from nodes.goal_success.judges.segmentation.features import Embed, FloatArray
from nodes.goal_tracking.judges.goal_extraction.features import SchemaIndex, goal_features
from nodes.goal_tracking.judges.goal_extraction.request_cues import is_request, request_clause
from nodes.judges.classifier import MLPClassifier
from nodes.judges.spec import JudgeSpecError, parse_spec
from nodes.judges.vectors import VectorTable

ROLE = "goal_extraction"
MODEL_PATH = Path(__file__).parent / "goal_extractor_mlp.npz"
#: Utterances before the current one that the extractor reads as context ``c_t``.
CONTEXT_UTTERANCES = 4
#: At most this many schema goals per utterance (SGD users raise one, rarely two, at a time).
MAX_GOALS_PER_UTTERANCE = 2


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


class LocalGoalExtractor:
    """``local``: the schema-scoring MLP with a schema, request clauses without one.

    Args:
        schema: Services the goals are named from; None for schema-free extraction.
        model: The trained scorer (default: the shipped ``goal_extractor_mlp``).
        embed: The embedding function (default: MiniLM, loaded on first use).
        max_goals: At most this many schema goals per utterance.
    """

    name = "local"

    def __init__(
        self,
        schema: Mapping[str, ServiceSchema] | None = None,
        *,
        model: MLPClassifier | None = None,
        embed: Embed | None = None,
        max_goals: int = MAX_GOALS_PER_UTTERANCE,
    ) -> None:
        self.schema = dict(schema) if schema is not None else None
        self._model = model
        self.vectors = VectorTable(embed)
        self.max_goals = max_goals
        self._index: SchemaIndex | None = None

    @property
    def model(self) -> MLPClassifier:
        """The scorer, loaded on first use."""
        if self._model is None:
            if not MODEL_PATH.exists():
                raise FileNotFoundError(
                    f"No goal-extraction model at {MODEL_PATH}; run `make train-goal-extractor`."
                )
            self._model = MLPClassifier.load(MODEL_PATH)
        return self._model

    @property
    def index(self) -> SchemaIndex:
        """The schema's embedded texts, built on first use."""
        if self._index is None:
            assert self.schema is not None
            self._index = SchemaIndex.build(self.schema, lambda t: self.vectors.embed(list(t)))
        return self._index

    def prepare(self, texts: Sequence[str]) -> None:
        """Embed the chunk's utterances (and the schema, once) in one batch."""
        if self.schema is not None:
            _ = self.index
            self.vectors.load(texts)

    def extract(self, utterance: Utterance, context: Sequence[Utterance]) -> list[CandidateGoal]:
        """Candidate goals of a user utterance; ``[]`` for a system utterance."""
        if utterance.speaker != "USER" or not utterance.text.strip():
            return []
        system = next((u.text for u in reversed(context) if u.speaker == "SYSTEM"), "")
        clause = request_clause(utterance.text)
        if self.schema is None:
            if clause is None or not is_request(utterance.text, system):
                return []
            return [CandidateGoal(clause, "", "", {}, 0.6, utterance.text)]
        return self._schema_goals(utterance, context, system, clause)

    def features(self, utterance: Utterance, context: Sequence[Utterance]) -> FloatArray:
        """Feature rows for every intent of the schema (row order of ``index``)."""
        system = next((u.text for u in reversed(context) if u.speaker == "SYSTEM"), "")
        users = [u.text for u in context if u.speaker == "USER" and u.text.strip()]
        everything = [u.text for u in context if u.text.strip()]
        vectors = self.vectors.get([utterance.text, *everything])
        by_text = dict(zip(everything, vectors[1:], strict=True))
        return goal_features(
            self.index,
            vectors[0],
            utterance.text,
            by_text[system] if system else None,
            system,
            np.stack([by_text[u] for u in users]) if users else vectors[:0],
            vectors[1:],
            " ".join(everything),
        )

    def probabilities(self, utterance: Utterance, context: Sequence[Utterance]) -> FloatArray:
        """The model's probability for every intent of the schema (row order of ``index``)."""
        return self.model.predict_proba(self.features(utterance, context))

    def ranked(self, utterance: Utterance, context: Sequence[Utterance]) -> list[tuple[int, float]]:
        """The ``max_goals`` best intents (row, probability), best first.

        An intent whose sibling (the same intent of another service, e.g. two hotel services'
        ``ReserveHotel``) ranks higher is skipped: the user pursues one of them, not both. So
        is an intent of the same service and kind (search or transaction) as a higher one:
        one-way and round-trip flight searches are alternatives, whereas a search and a
        booking of one service can come in one breath.
        """
        probabilities = self.probabilities(utterance, context)
        chosen: list[tuple[int, float]] = []
        for row in np.argsort(-probabilities):
            if any(self._alternatives(int(row), other) for other, _ in chosen):
                continue
            chosen.append((int(row), float(probabilities[row])))
            if len(chosen) == self.max_goals:
                break
        return chosen

    def _alternatives(self, row: int, other: int) -> bool:
        """Whether intents ``row`` and ``other`` are ways to the same goal (pick one)."""
        if self.index.siblings[row, other]:
            return True
        (service, _), (other_service, _) = self.index.pairs[row], self.index.pairs[other]
        kind = self.index.intents[row].is_transactional
        return service == other_service and kind == self.index.intents[other].is_transactional

    def _schema_goals(
        self,
        utterance: Utterance,
        context: Sequence[Utterance],
        system: str,
        clause: str | None,
    ) -> list[CandidateGoal]:
        assert self.schema is not None
        if not len(self.index):
            return []
        goals = []
        for row, p in self.ranked(utterance, context):
            if p < self.model.threshold:
                break
            service, intent = self.index.pairs[row]
            description = clause or self.index.intents[row].description or intent
            slots = stated_values(self.schema[service], intent, utterance.text)
            goals.append(
                CandidateGoal(description, service, intent, slots, round(p, 4), utterance.text)
            )
        return goals


def stated_values(service: ServiceSchema, intent: str, text: str) -> dict[str, str]:
    """Categorical slot values of ``intent`` that ``text`` names word for word.

    Only values that cannot be confused with ordinary words or numbers ("True", "1") count.
    """
    spec = service.intent(intent)
    if spec is None:
        return {}
    wanted = {*spec.required_slots, *spec.optional_slots}
    found: dict[str, str] = {}
    lowered = text.lower()
    for slot in service.slots:
        if slot.name not in wanted or not slot.is_categorical:
            continue
        for value in slot.possible_values:
            if len(value) < 3 or value.lower() in {"true", "false", "dontcare"}:
                continue
            if value.replace(".", "").isdigit():
                continue
            if re.search(rf"\b{re.escape(value.lower())}\b", lowered):
                found[slot.name] = value
                break
    return found


@functools.lru_cache(maxsize=8)
def goal_extractor(spec: str = "local", schema_path: str | None = None) -> GoalExtractor:
    """The goal extractor for ``spec``, built once per (spec, schema).

    Args:
        spec: ``"local"`` (an LLM extractor comes with the batched turn prompt).
        schema_path: An SGD ``schema.json``; None for schema-free extraction.

    Raises:
        JudgeSpecError: The spec is malformed or not ``local``.
    """
    parsed = parse_spec(spec)
    if not parsed.is_local or parsed.variant not in (None, "default", "learned"):
        raise JudgeSpecError(f"{ROLE}: only the local extractor exists for now, not {spec!r}")
    schema = load_sgd_schema(schema_path) if schema_path else None
    return LocalGoalExtractor(schema)
