"""The LLM missing-slot query: Figure 8 with chain of thought, through LLMRole."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, Field

from todeval.evals.memory_words import intent_in_words, slot_in_words
from todeval.nodes.judges.llm_role import LLMRole
from todeval.nodes.memory.judges.missing_slot_query.role import (
    MISSING_ROLE,
    MissingSlotQuery,
    Turns,
)
from todeval.nodes.memory.judges.units import render_context
from todeval.nodes.prompts.memory import MISSING_SLOT_QUERY_PROMPT


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
