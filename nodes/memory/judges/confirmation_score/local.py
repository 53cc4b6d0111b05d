"""The local GPT-4 score: null with the reason (no local judge invents that score)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from todeval.evals.memory_schema import MsTodTurn
from todeval.nodes.memory.judges.confirmation_score.role import ConfirmationScore


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
