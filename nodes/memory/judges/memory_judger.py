"""The memory judger role: does a QA memory unit contribute to the task goal? (MAP, §4.2).

MAP scores each activated unit with ``s = P(y=1 | c_i, q_miss, (q, a))`` (Eq. 2), a model trained
with cross-entropy (Eq. 3), then re-ranks by ``alpha * s_retrieval + (1 - alpha) * s``.

* ``local`` (= ``local:learned``, :class:`LocalMemoryJudger`): a one-hidden-layer MLP on
  relational MiniLM features of the unit, the context and the other activated units
  (:func:`judger_features`). No feature names a slot, intent or service, so it transfers to
  unseen ones; ``scripts/train_memory_judger.py`` trains it on SGD train (:data:`MODEL_PATH`),
  on banks built from each stored session's dialogue as evaluation builds them by default
  (``memory.bank_source = "dialogue"``; the JSON beside it names its ``bank_source``).
* ``<provider>:<model>`` (:class:`LLMMemoryJudger`): the judger prompt per unit; an unreadable
  answer scores ``None``.
* ``none``: no judger; the re-rank keeps ``s_retrieval``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import numpy as np
from pydantic import BaseModel, Field, field_validator

from todeval.evals.memory_schema import MemoryUnit
from todeval.evals.memory_words import intent_in_words, slot_in_words
from todeval.evals.metrics.memory.scores import slot_value_mentioned
from todeval.nodes.judges.classifier import MLPClassifier
from todeval.nodes.judges.result import JudgeResult
from todeval.nodes.judges.roles import PromptJudge
from todeval.nodes.judges.text import WORD
from todeval.nodes.judges.vectors import Embed, FloatArray, VectorTable


class MemoryJudger(Protocol):
    """Scores activated memory units: ``P(unit contributes to the task goal)`` each."""

    name: str

    def score(
        self, context: str, missing_query: str, units: Sequence[MemoryUnit]
    ) -> list[float | None]:
        """One probability per unit (None where the judge could not judge)."""
        ...


MODEL_PATH = Path(__file__).parent / "memory_judger.npz"
"""The shipped local model (its training report in ``memory_judger.json`` beside it)."""

#: Column order of :func:`judger_features`.
FEATURE_NAMES = (
    "question_to_query",
    "question_to_query_margin",
    "slot_asked",
    "has_query",
    "answer_to_context",
    "description_to_context",
    "description_to_context_margin",
    "intent_to_context",
    "value_in_context",
    "description_named",
    "description_named_margin",
)

_STOP = frozenset(
    "a an the to of for in on at and or with from by is was were be the user wants want "
    "did does do what which when where how who i it its this that".split()
)


def query_questions(missing_query: str) -> list[str]:
    """The separate questions of ``q_miss`` (split after each ``?``)."""
    parts = re.findall(r"[^?]+\?|[^?]+$", missing_query)
    return [part.strip() for part in parts if part.strip()]


def _content_words(text: str) -> set[str]:
    return {w for w in WORD.findall(text.lower()) if w not in _STOP}


def _named_share(unit: MemoryUnit, context_words: set[str]) -> float:
    """Share of what the unit's intent description names (beyond the intent) said in context.

    "The user wants to reserve restaurant for Gen Korean BBQ House in Milpitas" names
    ``gen korean bbq house milpitas``; a same-intent sibling session names other things.
    """
    named = _content_words(unit.intent_description) - _content_words(intent_in_words(unit.intent))
    return len(named & context_words) / len(named) if named else 0.0


def judger_features(
    context: str, missing_query: str, units: Sequence[MemoryUnit], embed: Embed
) -> FloatArray:
    """Feature rows (columns :data:`FEATURE_NAMES`) for ``units`` activated for ``context``.

    Each unit is judged from itself, the context and ``q_miss`` (Eq. 2 is pointwise), except
    the margins, which compare it with the best of the activated units.
    """
    if not units:
        return np.zeros((0, len(FEATURE_NAMES)), np.float32)
    questions = query_questions(missing_query)
    n = len(units)
    texts = [context, *questions]
    for unit in units:
        texts += [unit.question, unit.answer, unit.intent_description, intent_in_words(unit.intent)]
    vectors = embed(texts)
    ctx, query = vectors[0], vectors[1 : 1 + len(questions)]
    per_unit = vectors[1 + len(questions) :].reshape(n, 4, -1)
    question_to_query = (
        (per_unit[:, 0] @ query.T).max(axis=1) if len(questions) else np.zeros(n, np.float32)
    )
    lowered = missing_query.lower()
    slot_asked = [bool(u.slot) and slot_in_words(u.slot or "") in lowered for u in units]
    value_in_context = [
        bool(u.value) and slot_value_mentioned(u.value or "", context, slot=u.slot) for u in units
    ]
    context_words = _content_words(context)
    named = np.array([_named_share(u, context_words) for u in units], np.float32)
    description = per_unit[:, 2] @ ctx
    columns = [
        question_to_query,
        question_to_query - question_to_query.max(),
        np.array(slot_asked, np.float32),
        np.full(n, float(bool(questions)), np.float32),
        per_unit[:, 1] @ ctx,
        description,
        description - description.max(),
        per_unit[:, 3] @ ctx,
        np.array(value_in_context, np.float32),
        named,
        named - named.max(),
    ]
    return np.stack(columns, axis=1).astype(np.float32)


class LocalMemoryJudger:
    """``local``: the trained MLP on :func:`judger_features` (model, MiniLM loaded on first use)."""

    def __init__(self, model: MLPClassifier | None = None, embed: Embed | None = None) -> None:
        self.name = "local"
        self._model = model
        self.vectors = VectorTable(embed)

    @property
    def model(self) -> MLPClassifier:
        """The scorer, loaded on first use."""
        if self._model is None:
            if not MODEL_PATH.exists():
                raise FileNotFoundError(
                    f"No memory judger model at {MODEL_PATH}; run `make train-memory-judger`."
                )
            self._model = MLPClassifier.load(MODEL_PATH)
        return self._model

    def features(self, context: str, missing_query: str, units: Sequence[MemoryUnit]) -> FloatArray:
        """:func:`judger_features` with this judger's embeddings."""
        return judger_features(context, missing_query, units, lambda t: self.vectors.get(list(t)))

    def score(
        self, context: str, missing_query: str, units: Sequence[MemoryUnit]
    ) -> list[float | None]:
        """``P(y=1)`` for every unit, rounded to 4 places."""
        if not units:
            return []
        probabilities = self.model.predict_proba(self.features(context, missing_query, units))
        return [round(float(p), 4) for p in probabilities]


class LLMJudgement(BaseModel):
    """The memory judger prompt's JSON."""

    probability: float = Field(ge=0.0, le=1.0, description="P(the unit contributes), 0-1.")
    rationale: str = Field(default="", description="One short sentence saying why.")

    @field_validator("probability", mode="before")
    @classmethod
    def _percent(cls, value: object) -> object:
        # "85%" or 85 from a model that answered in percent.
        if isinstance(value, str) and value.strip().endswith("%"):
            return float(value.strip()[:-1]) / 100
        if isinstance(value, int | float) and 1 < value <= 100:
            return value / 100
        return value


class LLMMemoryJudger(PromptJudge[LLMJudgement]):
    """The memory judger prompt, one call per unit."""

    def judge(
        self, context: str, missing_query: str, units: Sequence[MemoryUnit]
    ) -> list[JudgeResult[float]]:
        """Every unit's probability with the reason when it could not be judged."""
        results = []
        for unit in units:
            answer = self.ask(
                conversation_history=context,
                missing_query=missing_query or "none",
                intent_description=unit.intent_description,
                question=unit.question,
                answer=unit.answer,
            )
            value = answer.value
            results.append(
                JudgeResult(
                    value=value.probability if value else None,
                    judge=self.name,
                    reason=value.rationale if value else answer.reason,
                )
            )
        return results

    def score(
        self, context: str, missing_query: str, units: Sequence[MemoryUnit]
    ) -> list[float | None]:
        """``P(y=1)`` per unit; None where the model's answer could not be used."""
        return [result.value for result in self.judge(context, missing_query, units)]
