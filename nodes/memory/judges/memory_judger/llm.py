"""The LLM memory judger: MAP's judger prompt through LLMRole."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field, field_validator

from todeval.evals.memory_schema import MemoryUnit
from todeval.nodes.judges.llm_role import LLMRole
from todeval.nodes.judges.result import JudgeResult
from todeval.nodes.memory.judges.memory_judger.role import ROLE
from todeval.nodes.prompts.memory import MEMORY_JUDGER_PROMPT, MEMORY_JUDGER_SYSTEM_PROMPT


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


class LLMMemoryJudger(LLMRole[LLMJudgement]):
    """:data:`MEMORY_JUDGER_PROMPT`, one call per unit, through :class:`LLMJudge`."""

    role = ROLE
    prompt = MEMORY_JUDGER_PROMPT
    system = MEMORY_JUDGER_SYSTEM_PROMPT
    output_model = LLMJudgement

    def judge(
        self, context: str, missing_query: str, units: Sequence[MemoryUnit]
    ) -> list[JudgeResult[float]]:
        """Every unit's probability with the reason when it could not be judged."""
        results = []
        for unit in units:
            answer = self.llm.invoke(
                {
                    "conversation_history": context,
                    "missing_query": missing_query or "none",
                    "intent_description": unit.intent_description,
                    "question": unit.question,
                    "answer": unit.answer,
                }
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
