"""The LLM matcher: todeval's own difficulty-match prompt (the paper prints none)."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from todeval.nodes.judges.llm_role import LLMRole
from todeval.nodes.judges.result import JudgeResult
from todeval.nodes.proactive.judges.difficulty_judge.role import ROLE
from todeval.nodes.prompts.proactive import DIFFICULTY_MATCH_PROMPT


class MatchOutput(BaseModel):
    """The prompt's JSON."""

    matches: list[bool] = Field(description="Per predicted target: similar meaning or not.")


class LLMDifficultyJudge(LLMRole[MatchOutput]):
    """One call for all the predictions of one environment."""

    role = ROLE
    prompt = DIFFICULTY_MATCH_PROMPT
    output_model = MatchOutput

    def matches(self, reference: str, predictions: Sequence[str]) -> JudgeResult[list[bool]]:
        """A reply with the wrong number of verdicts is None with the reason."""
        if not predictions:
            return JudgeResult([], self.name)
        result = self.llm.invoke(
            {
                "reference": reference,
                "predictions": "\n".join(f"{i}. {p}" for i, p in enumerate(predictions, 1)),
            }
        )
        if result.value is None:
            return JudgeResult(None, self.name, result.reason)
        if len(result.value.matches) != len(predictions):
            reason = f"{len(result.value.matches)} verdicts for {len(predictions)} predictions"
            return JudgeResult(None, self.name, reason)
        return JudgeResult(list(result.value.matches), self.name)
