"""The difficulty check's matcher: which predicted targets convey the reference's meaning.

The paper: "a model will evaluate how many of the predicted targets convey a similar meaning to
the reference target". It prints no prompt for this; todeval's own is
:data:`~nodes.prompts.proactive.DIFFICULTY_MATCH_PROMPT` (:class:`LLMDifficultyJudge`, one call
for all the predictions of one environment).

``local`` (:class:`LocalDifficultyJudge`): a prediction matches when it is close to the
reference target. Close means a MiniLM cosine of at least :data:`MATCH_COSINE` (the closeness the
local target-planning judge reads as ``target_similarity``), or at least :data:`NEAR_COSINE` with
half the reference's content words (its action verb aside) in the prediction. The cut points are
todeval's choice, not calibrated against people (no labels exist for this step). A stand-in for
the paper's matching model.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from pydantic import BaseModel, Field

from todeval.nodes.judges.result import JudgeResult
from todeval.nodes.judges.roles import PromptJudge
from todeval.nodes.judges.vectors import Embed, VectorTable
from todeval.nodes.proactive.text import DOMAIN_ACTIONS, content_stems, stem

_ACTIONS = {verb for verbs in DOMAIN_ACTIONS.values() for verb in verbs}

MATCH_COSINE = 0.6
"""Cosine at or above which a predicted target counts as the reference's."""

NEAR_COSINE = 0.4
"""Cosine at or above which half the reference's content words make a match."""


class DifficultyJudge(Protocol):
    """Anything that matches predicted targets to the reference."""

    name: str

    def matches(self, reference: str, predictions: Sequence[str]) -> JudgeResult[list[bool]]:
        """One verdict per prediction, in order."""
        ...


class MatchOutput(BaseModel):
    """The prompt's JSON."""

    matches: list[bool] = Field(description="Per predicted target: similar meaning or not.")


class LocalDifficultyJudge:
    """MiniLM cosine of each prediction to the reference target >= :data:`MATCH_COSINE`."""

    name = "local"

    def __init__(self, embed: Embed | None = None, cut: float = MATCH_COSINE) -> None:
        self.vectors = VectorTable(embed)  # MiniLM, loaded on first use
        self.cut = cut

    def matches(self, reference: str, predictions: Sequence[str]) -> JudgeResult[list[bool]]:
        """See the module docstring."""
        if not predictions:
            return JudgeResult([], self.name)
        vectors = self.vectors.embed([reference, *predictions])
        similarity = vectors[1:] @ vectors[0]
        wanted = content_stems(reference) - {stem(w) for w in _ACTIONS}
        shared = [
            len(wanted & content_stems(p)) / len(wanted) if wanted else 0.0 for p in predictions
        ]
        verdicts = [
            bool(s >= self.cut or (s >= NEAR_COSINE and share >= 0.5))
            for s, share in zip(similarity, shared, strict=True)
        ]
        reason = "cosine " + ", ".join(f"{s:.2f}" for s in similarity)
        return JudgeResult(verdicts, self.name, reason)


class LLMDifficultyJudge(PromptJudge[MatchOutput]):
    """One call for all the predictions of one environment."""

    def matches(self, reference: str, predictions: Sequence[str]) -> JudgeResult[list[bool]]:
        """A reply with the wrong number of verdicts is None with the reason."""
        if not predictions:
            return JudgeResult([], self.name)
        result = self.ask(
            reference=reference,
            predictions="\n".join(f"{i}. {p}" for i, p in enumerate(predictions, 1)),
        )
        if result.value is None:
            return JudgeResult(None, self.name, result.reason)
        if len(result.value.matches) != len(predictions):
            reason = f"{len(result.value.matches)} verdicts for {len(predictions)} predictions"
            return JudgeResult(None, self.name, reason)
        return JudgeResult(list(result.value.matches), self.name)
