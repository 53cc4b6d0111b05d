"""The missing-slot query of memory-guided dialogue planning (paper 001, §4.2, Figure 8).

MAP hypothesises with chain-of-thought prompting the missing slot query ``q_miss``: what the
memory must supply for the session's intent. The ``missing_slot_query`` role:

* ``local``: the intent's task attributes (:func:`~nodes.memory.judges.planning.
  task_attributes`) that the context does not fill, each asked as a third-person question
  (Figure 8's rules, :func:`missing_question`).
* ``<provider>:<model>``: Figure 8 with chain of thought (:data:`MISSING_SLOT_QUERY_PROMPT`).

Every result records the judge spec; a judge that cannot answer returns ``None`` with a reason.
:mod:`nodes.memory.judges.planning` re-exports this module's public names.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Protocol

from pydantic import BaseModel, Field

from evals.memory_schema import MsTodTurn
from nodes.judges.llm_role import LLMRole
from nodes.judges.spec import JudgeSpecError, parse_spec
from nodes.memory.judges.bank_builder.judge import intent_in_words, render_context, slot_in_words
from nodes.prompts.memory import MISSING_SLOT_QUERY_PROMPT

__all__ = [
    "LLMMissingSlotQuery",
    "LocalMissingSlotQuery",
    "MissingSlotQuerier",
    "MissingSlotQuery",
    "missing_question",
    "missing_slot_querier",
]

MISSING_ROLE = "missing_slot_query"
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


class MissingSlotQuerier(Protocol):
    """Anything that asks which task attributes the context leaves unanswered."""

    name: str

    def query(
        self,
        context: Turns,
        intent: str,
        attributes: Sequence[str],
        *,
        stated: Mapping[str, str] | None = None,
    ) -> MissingSlotQuery:
        """``q_miss`` for ``intent``'s ``attributes`` (``stated``: values already given)."""
        ...


def missing_question(intent: str, slot: str) -> str:
    """The third-person question asking for one missing attribute (Figure 8's rules)."""
    return f"What {slot_in_words(slot)} does the user want for the {intent_in_words(intent)}?"


class LocalMissingSlotQuery:
    """``local``: the task attributes without a stated value, each asked as a question."""

    def __init__(self) -> None:
        self.name = "local"

    def query(
        self,
        context: Turns,
        intent: str,
        attributes: Sequence[str],
        *,
        stated: Mapping[str, str] | None = None,
    ) -> MissingSlotQuery:
        """Attributes not in ``stated`` are missing; no attributes -> not judged (None)."""
        if not attributes:
            return MissingSlotQuery(
                intent=intent,
                task_attributes=[],
                missing_slots=None,
                query=None,
                judge=self.name,
                reason=f"no task attributes known for intent {intent!r} (no schema, no sessions)",
            )
        missing = [slot for slot in attributes if slot not in (stated or {})]
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


class LLMMissingSlotQuery(LLMRole[LLMMissingSlotOutput]):
    """Figure 8 with chain of thought through :class:`LLMJudge`."""

    role = MISSING_ROLE
    prompt = MISSING_SLOT_QUERY_PROMPT
    output_model = LLMMissingSlotOutput

    def query(
        self,
        context: Turns,
        intent: str,
        attributes: Sequence[str],
        *,
        stated: Mapping[str, str] | None = None,
    ) -> MissingSlotQuery:
        """One call; named attributes are mapped back to slot names where they match."""
        by_words = {slot_in_words(slot): slot for slot in attributes}
        result = self.llm.invoke(
            {
                "conversation_history": render_context(context),
                "intent": intent_in_words(intent) if intent else "unknown",
                "task_attributes": ", ".join(by_words) or "unknown",
            }
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


@functools.lru_cache(maxsize=8)
def missing_slot_querier(spec: str = "local") -> MissingSlotQuerier:
    """The missing-slot query judge for ``spec`` (built once per spec).

    Raises:
        JudgeSpecError: The spec is malformed or an unknown local variant.
    """
    parsed = parse_spec(spec)
    if not parsed.is_local:
        return LLMMissingSlotQuery(parsed)
    if parsed.variant not in (None, "default"):
        raise JudgeSpecError(f"{MISSING_ROLE}: no local variant {parsed.variant!r}")
    return LocalMissingSlotQuery()
