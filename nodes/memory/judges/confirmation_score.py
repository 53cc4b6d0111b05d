"""The Figure 11 "GPT-4 score" of a confirmation response (MAP, paper 001, App. A.4).

The paper scores the reader's confirmation response from 1 to 10 with GPT-4, given the context,
the gold task goal and the reference response. LLM only: the local judge abstains with
:data:`LOCAL_REASON` (no local judge invents that score). The node keeps the answer as a
:class:`ConfirmationScore`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, Field

from todeval.evals.memory_schema import MsTodTurn
from todeval.nodes.judges.result import JudgeResult
from todeval.nodes.judges.roles import PromptJudge
from todeval.nodes.memory.judges.units import render_context, render_slot_values

LOCAL_REASON = "the GPT-4 score needs an LLM judge"


class ScoreOutput(BaseModel):
    """Figure 11's JSON."""

    Rationale: str = Field(default="", description="The rationale of the score.")
    Score: int = Field(ge=1, le=10, description="An integer score from 1 to 10.")


class ConfirmationScore(BaseModel):
    """The Figure 11 score of a confirmation response, as the record keeps it."""

    score: int | None = Field(description="1-10 (10 best); None if not judged.")
    rationale: str | None = Field(default=None, description="The judge's rationale.")
    judge: str = Field(description="The judge spec.")
    reason: str | None = Field(default=None, description="Why the score is None.")

    @classmethod
    def from_result(cls, result: JudgeResult[ScoreOutput]) -> ConfirmationScore:
        """The score a judge gave, or None with its reason."""
        answer = result.value
        if answer is None:
            return cls(score=None, judge=result.judge, reason=result.reason)
        return cls(score=answer.Score, rationale=answer.Rationale.strip(), judge=result.judge)


class LLMConfirmationScorer(PromptJudge[ScoreOutput]):
    """Figure 11 (the paper's "GPT-4 score"), one call per response."""

    def score(
        self,
        context: Sequence[MsTodTurn],
        task_goal: Mapping[str, str],
        reference: str,
        predicted: str,
    ) -> JudgeResult[ScoreOutput]:
        """Score ``predicted`` against the gold ``task_goal`` and the ``reference`` response."""
        return self.ask(
            conversation_history=render_context(context),
            task_goal=render_slot_values(task_goal),
            reference_answer=reference,
            predict_answer=predicted,
        )


ConfirmationScorer = LLMConfirmationScorer
"""The role's judge: the one scorer there is (a local spec gets an abstaining stand-in)."""
