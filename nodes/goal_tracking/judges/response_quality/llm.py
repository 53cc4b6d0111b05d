"""The LLM response-quality judge: :data:`RESPONSE_QUALITY_PROMPT`, one call per dialogue."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field

from todeval.nodes.goal_tracking.judges.response_quality.role import ROLE, ResponseQuality
from todeval.nodes.judges.llm import LLMJudge
from todeval.nodes.judges.result import JudgeResult
from todeval.nodes.judges.spec import JudgeSpec
from todeval.nodes.prompts.goal_tracking import RESPONSE_QUALITY_PROMPT


class TurnScore(BaseModel):
    """One system turn's relevance."""

    turn: int = Field(description="The turn number as the dialogue lists it.")
    score: int = Field(ge=1, le=5, description="Relevance, 1-5.")


class ResponseQualityOutput(BaseModel):
    """The prompt's JSON."""

    relevance: list[TurnScore] = Field(description="Relevance of each SYSTEM turn.")
    coherence: int = Field(ge=1, le=5, description="Coherence of the whole dialogue, 1-5.")


class LLMResponseQuality:
    """The response-quality prompt through one LLM spec.

    Args:
        spec: The LLM spec.
        max_retries: Retries after a malformed answer.
        **llm_kwargs: Passed to :class:`LLMJudge`.
    """

    def __init__(self, spec: JudgeSpec | str, *, max_retries: int = 3, **llm_kwargs: Any) -> None:
        self.llm: LLMJudge[ResponseQualityOutput] = LLMJudge(
            role=ROLE, spec=spec, prompt=RESPONSE_QUALITY_PROMPT,
            output_model=ResponseQualityOutput, max_retries=max_retries, **llm_kwargs,
        )  # fmt: skip
        self.name = self.llm.spec.raw

    def score(self, utterances: Sequence[Mapping[str, Any]]) -> JudgeResult[ResponseQuality]:
        """Relevance of the system's turns (scores for other turns are dropped) and coherence."""
        lines = "\n".join(
            f"[{k}] {u['speaker']}: {' '.join(str(u['text']).split())}"
            for k, u in enumerate(utterances, start=1)
        )
        result = self.llm.invoke({"dialogue": lines})
        if result.value is None:
            return JudgeResult(None, self.name, result.reason)
        system = {k for k, u in enumerate(utterances, start=1) if u["speaker"] == "SYSTEM"}
        relevance = {s.turn: s.score for s in result.value.relevance if s.turn in system}
        if not relevance:
            return JudgeResult(None, self.name, "the judge scored none of the system's turns")
        turn_level = sum(relevance.values()) / len(relevance)
        quality = ResponseQuality(turn_level, float(result.value.coherence), relevance)
        return JudgeResult(quality, self.name)
