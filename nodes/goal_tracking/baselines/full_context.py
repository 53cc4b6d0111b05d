"""The zero-shot full-context baseline (paper 000 §7: LLM judges read the whole dialogue).

Following Kazi et al. (2024), as the paper's LLM baselines do: after each utterance the judge
reads the whole dialogue so far (:data:`FULL_CONTEXT_PROMPT`) and lists every user goal with
its status. No memory, no retrieval: the prompt grows with the dialogue, which is the cost the
batched tracker (:mod:`nodes.goal_tracking.judges.goal_extraction.llm`) avoids.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from todeval.nodes.goal_tracking.judges.goal_extraction import Utterance
from todeval.nodes.goal_tracking.judges.goal_extraction.llm import (
    STATUSES,
    JudgedGoal,
    render_context,
)
from todeval.nodes.judges.costed import CostedJudge
from todeval.nodes.judges.spec import JudgeSpec
from todeval.nodes.prompts.goal_tracking import FULL_CONTEXT_PROMPT, GOAL_TRACKER_SYSTEM_PROMPT


class FullContextOutput(BaseModel):
    """The full-context JSON."""

    goals: list[JudgedGoal] = Field(description="Every user goal so far with its status.")


class FullContextJudge(CostedJudge[FullContextOutput]):
    """One call per utterance over the whole dialogue so far (``kwargs``: see CostedJudge)."""

    system_prompt = GOAL_TRACKER_SYSTEM_PROMPT

    def __init__(self, spec: str | JudgeSpec, **kwargs: Any) -> None:
        super().__init__(
            "goal_full_context", spec, FULL_CONTEXT_PROMPT, FullContextOutput, **kwargs
        )

    def goals(
        self, utterances_so_far: Sequence[Utterance], schema_text: str = "none"
    ) -> list[JudgedGoal]:
        """Every goal of the dialogue so far with its current status.

        ``[]`` when the judge gave no usable answer (:attr:`last` says why).
        """
        value, _ = self.ask(
            {
                "statuses": STATUSES,
                "schema": schema_text,
                "context": render_context(utterances_so_far),
            }
        )
        return list(value.goals) if value is not None else []
