"""What the GPT-4 score returns: a 1-10 score of a confirmation response (paper 001, Fig. 11)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from pydantic import BaseModel, Field

from todeval.evals.memory_schema import MsTodTurn

SCORE_ROLE = "gpt4_score"


class ConfirmationScore(BaseModel):
    """The Figure 11 score of a confirmation response."""

    score: int | None = Field(description="1-10 (10 best); None if not judged.")
    rationale: str | None = Field(default=None, description="The judge's rationale.")
    judge: str = Field(description="The judge spec.")
    reason: str | None = Field(default=None, description="Why the score is None.")


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
