"""The Figure 11 "GPT-4 score" of a confirmation response (paper 001, App. A.4).

The paper scores the reader's confirmation response from 1 to 10 with GPT-4, given the context,
the gold task goal and the reference response. LLM only: :func:`confirmation_scorer` answers a
local spec with a scorer that always returns ``None`` and the reason (no local judge invents that
score). :mod:`nodes.memory.judges.reader.judge` re-exports this module's public names.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Protocol

from pydantic import BaseModel, Field

from evals.memory_schema import MsTodTurn
from nodes.judges.llm_role import LLMRole
from nodes.judges.spec import parse_spec
from nodes.memory.judges.bank_builder.judge import render_context
from nodes.prompts.memory import GPT4_SCORE_PROMPT, GPT4_SCORE_SYSTEM_PROMPT

__all__ = [
    "ConfirmationScore",
    "ConfirmationScorer",
    "LLMConfirmationScorer",
    "LocalConfirmationScorer",
    "confirmation_scorer",
]

SCORE_ROLE = "gpt4_score"


class ConfirmationScore(BaseModel):
    """The Figure 11 score of a confirmation response."""

    score: int | None = Field(description="1-10 (10 best); None if not judged.")
    rationale: str | None = Field(default=None, description="The judge's rationale.")
    judge: str = Field(description="The judge spec.")
    reason: str | None = Field(default=None, description="Why the score is None.")


class LLMScoreOutput(BaseModel):
    """Figure 11's JSON."""

    Rationale: str = Field(default="", description="The rationale of the score.")
    Score: int = Field(ge=1, le=10, description="An integer score from 1 to 10.")


class ConfirmationScorer(Protocol):
    """Scores a confirmation response 1-10 (Figure 11)."""

    name: str

    def score(
        self,
        context: Sequence[MsTodTurn],
        task_goal: Mapping[str, str],
        reference: str,
        predicted: str,
    ) -> ConfirmationScore:
        """Score ``predicted`` against the gold ``task_goal`` and the ``reference`` response."""
        ...


class LocalConfirmationScorer:
    """A local spec: the GPT-4 score is not computed (``None`` with the reason)."""

    def __init__(self, spec: str = "local") -> None:
        self.name = spec

    def score(
        self,
        context: Sequence[MsTodTurn],
        task_goal: Mapping[str, str],
        reference: str,
        predicted: str,
    ) -> ConfirmationScore:
        """Always ``None``: no local judge invents this score."""
        return ConfirmationScore(
            score=None, judge=self.name, reason="the GPT-4 score needs an LLM judge"
        )


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


@functools.lru_cache(maxsize=8)
def confirmation_scorer(spec: str = "local") -> ConfirmationScorer:
    """The Figure 11 scorer for ``spec`` (a local spec scores ``None``, with a reason).

    Raises:
        JudgeSpecError: The spec is malformed.
    """
    parsed = parse_spec(spec)
    if parsed.is_local:
        return LocalConfirmationScorer(parsed.raw)
    return LLMConfirmationScorer(parsed)
