"""The difficulty check's matcher: which predicted targets convey the reference's meaning.

The paper: "a model will evaluate how many of the predicted targets convey a similar meaning to
the reference target". It prints no prompt for this; todeval's own is
:data:`~nodes.prompts.proactive.DIFFICULTY_MATCH_PROMPT`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from todeval.nodes.judges.result import JudgeResult

ROLE = "difficulty_judge"


class DifficultyJudge(Protocol):
    """Anything that matches predicted targets to the reference."""

    name: str

    def matches(self, reference: str, predictions: Sequence[str]) -> JudgeResult[list[bool]]:
        """One verdict per prediction, in order."""
        ...
