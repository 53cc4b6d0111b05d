"""The response-quality role's types and LLM judge: G-Eval relevance and coherence (ATOD §6.3).

Input: a dialogue's utterances (``{"speaker", "text"}``). Output: :class:`ResponseQuality`
(``turn_level``: the mean relevance of the system's turns, ``dialogue_level``: coherence, both
on G-Eval's 1-5 scale), or None with the reason. Relevance and coherence are judgements about
the wording that the paper gives to an LLM; no local model of todeval's measures them, and a
made-up score would be worse than none, so the local judge abstains (:data:`LOCAL_REASON`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import BaseModel, Field

from todeval.nodes.judges.result import JudgeResult
from todeval.nodes.judges.roles import PromptJudge

LOCAL_REASON = (
    "response quality (G-Eval relevance and coherence) needs an LLM judge: "
    "give response_quality an LLM spec"
)


@dataclass(frozen=True)
class ResponseQuality:
    """One dialogue's response quality, G-Eval's 1-5 scale (relevance per 1-based utterance)."""

    turn_level: float
    dialogue_level: float
    relevance: dict[int, int]


class ResponseQualityJudge(Protocol):
    """Anything that scores a dialogue's responses."""

    name: str

    def score(self, utterances: Sequence[Mapping[str, Any]]) -> JudgeResult[ResponseQuality]:
        """The scores, or None with the reason."""
        ...


class TurnScore(BaseModel):
    """One system turn's relevance."""

    turn: int = Field(description="The turn number as the dialogue lists it.")
    score: int = Field(ge=1, le=5, description="Relevance, 1-5.")


class ResponseQualityOutput(BaseModel):
    """The prompt's JSON."""

    relevance: list[TurnScore] = Field(description="Relevance of each SYSTEM turn.")
    coherence: int = Field(ge=1, le=5, description="Coherence of the whole dialogue, 1-5.")


class LLMResponseQuality(PromptJudge[ResponseQualityOutput]):
    """The response-quality prompt (one call per dialogue) through one LLM spec."""

    def score(self, utterances: Sequence[Mapping[str, Any]]) -> JudgeResult[ResponseQuality]:
        """Relevance of the system's turns (scores for other turns are dropped) and coherence."""
        lines = "\n".join(
            f"[{k}] {u['speaker']}: {' '.join(str(u['text']).split())}"
            for k, u in enumerate(utterances, start=1)
        )
        result = self.ask(dialogue=lines)
        if result.value is None:
            return JudgeResult(None, self.name, result.reason)
        system = {k for k, u in enumerate(utterances, start=1) if u["speaker"] == "SYSTEM"}
        relevance = {s.turn: s.score for s in result.value.relevance if s.turn in system}
        if not relevance:
            return JudgeResult(None, self.name, "the judge scored none of the system's turns")
        turn_level = sum(relevance.values()) / len(relevance)
        quality = ResponseQuality(turn_level, float(result.value.coherence), relevance)
        return JudgeResult(quality, self.name)
