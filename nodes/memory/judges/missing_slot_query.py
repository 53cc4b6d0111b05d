"""The missing-slot query of memory-guided dialogue planning (MAP, paper 001, §4.2, Figure 8).

``q_miss`` is what the memory must supply for the session's intent.

* ``local`` (:class:`LocalMissingSlotQuery`): the intent's task attributes the context does not
  fill, each asked as a third-person question (Figure 8's rules, :func:`missing_question`).
* ``<provider>:<model>`` (:class:`LLMMissingSlotQuery`): Figure 8 with chain of thought.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from pydantic import BaseModel, Field

from todeval.evals.memory_schema import MsTodTurn
from todeval.evals.memory_words import intent_in_words, slot_in_words
from todeval.nodes.judges.roles import PromptJudge
from todeval.nodes.memory.judges.units import render_context

Turns = Sequence[MsTodTurn]


class MissingSlotQuery(BaseModel):
    """The hypothesised missing-slot query ``q_miss`` (§4.2, Figure 8)."""

    intent: str = Field(description="The intent whose task attributes were checked.")
    task_attributes: list[str] = Field(description="The intent's task attributes (slots).")
    missing_slots: list[str] | None = Field(
        description="Attributes the context leaves unanswered; None if not judged."
    )
    questions: list[str] = Field(
        default_factory=list, description="One third-person question per missing attribute."
    )
    query: str | None = Field(
        description="q_miss: the questions joined ('' when nothing is missing); None if not judged."
    )
    judge: str = Field(description="The judge spec that produced it.")
    reason: str | None = Field(default=None, description="Why the query is None.")


@dataclass(frozen=True)
class SlotQueryRequest:
    """The context, the session's intent, its task attributes and the values already stated."""

    context: Turns
    intent: str
    attributes: Sequence[str]
    stated: Mapping[str, str] | None = None


class MissingSlotQuerier(Protocol):
    """Anything that asks which task attributes the context leaves unanswered."""

    name: str

    def query(self, request: SlotQueryRequest) -> MissingSlotQuery:
        """``q_miss`` for the intent's attributes (those ``stated`` are not missing)."""
        ...


def missing_question(intent: str, slot: str) -> str:
    """The third-person question asking for one missing attribute (Figure 8's rules)."""
    return f"What {slot_in_words(slot)} does the user want for the {intent_in_words(intent)}?"


class LocalMissingSlotQuery:
    """``local``: the task attributes without a stated value, each asked as a question."""

    name = "local"

    def query(self, request: SlotQueryRequest) -> MissingSlotQuery:
        """Attributes not in ``stated`` are missing; no attributes -> not judged (None)."""
        intent, attributes = request.intent, request.attributes
        if not attributes:
            return MissingSlotQuery(
                intent=intent,
                task_attributes=[],
                missing_slots=None,
                query=None,
                judge=self.name,
                reason=f"no task attributes known for intent {intent!r} (no schema, no sessions)",
            )
        missing = [slot for slot in attributes if slot not in (request.stated or {})]
        questions = [missing_question(intent, slot) for slot in missing]
        return MissingSlotQuery(
            intent=intent,
            task_attributes=list(attributes),
            missing_slots=missing,
            questions=questions,
            query=" ".join(questions),
            judge=self.name,
        )


class LLMMissingSlotOutput(BaseModel):
    """The task slot query prompt's JSON (Figure 8, with the missing attributes named)."""

    missing_slots: list[str] = Field(default_factory=list, description="Unanswered attributes.")
    questions: list[str] = Field(description="One third-person question per missing attribute.")


class LLMMissingSlotQuery(PromptJudge[LLMMissingSlotOutput]):
    """Figure 8 with chain of thought, one call per item."""

    def query(self, request: SlotQueryRequest) -> MissingSlotQuery:
        """One call; named attributes are mapped back to slot names where they match."""
        intent, attributes = request.intent, request.attributes
        by_words = {slot_in_words(slot): slot for slot in attributes}
        result = self.ask(
            conversation_history=render_context(request.context),
            intent=intent_in_words(intent) if intent else "unknown",
            task_attributes=", ".join(by_words) or "unknown",
        )
        if result.value is None:
            return MissingSlotQuery(
                intent=intent,
                task_attributes=list(attributes),
                missing_slots=None,
                query=None,
                judge=self.name,
                reason=result.reason,
            )
        missing = [
            by_words.get(slot_in_words(named), named.strip())
            for named in result.value.missing_slots
            if named.strip()
        ]
        questions = [q.strip() for q in result.value.questions if q.strip()]
        return MissingSlotQuery(
            intent=intent,
            task_attributes=list(attributes),
            missing_slots=list(dict.fromkeys(missing)),
            questions=questions,
            query=" ".join(questions),
            judge=self.name,
        )
