"""The LLM scorer: paper 001 Figure 11 prompt through LLMRole."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, Field

from todeval.evals.memory_schema import MsTodTurn
from todeval.nodes.judges.llm_role import LLMRole
from todeval.nodes.memory.judges.confirmation_score.role import SCORE_ROLE, ConfirmationScore
from todeval.nodes.memory.judges.units import render_context
from todeval.nodes.prompts.memory import GPT4_SCORE_PROMPT, GPT4_SCORE_SYSTEM_PROMPT


class LLMScoreOutput(BaseModel):
    """Figure 11's JSON."""

    Rationale: str = Field(default="", description="The rationale of the score.")
    Score: int = Field(ge=1, le=10, description="An integer score from 1 to 10.")


class LLMConfirmationScorer(LLMRole[LLMScoreOutput]):
    """Figure 11 (the paper's "GPT-4 score") through :class:`LLMJudge`."""

    role = SCORE_ROLE
    prompt = GPT4_SCORE_PROMPT
    system = GPT4_SCORE_SYSTEM_PROMPT
    output_model = LLMScoreOutput

    def score(
        self,
        context: Sequence[MsTodTurn],
        task_goal: Mapping[str, str],
        reference: str,
        predicted: str,
    ) -> ConfirmationScore:
        """Score ``predicted`` against the gold ``task_goal`` and the ``reference`` response."""
        result = self.llm.invoke(
            {
                "conversation_history": render_context(context),
                "task_goal": "\n".join(f"{s}: {v}" for s, v in task_goal.items()) or "none",
                "reference_answer": reference,
                "predict_answer": predicted,
            }
        )
        value = result.value
        return ConfirmationScore(
            score=value.Score if value else None,
            rationale=value.Rationale.strip() if value else None,
            judge=self.name,
            reason=result.reason if value is None else None,
        )
