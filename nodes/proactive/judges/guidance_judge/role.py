"""What a guidance judge returns: a 1-10 score of a dialogue (Listing 12) and what it read.

The paper's judge gives one overall score. The local judge gives the rubric sub-scores it can
compute (dimension scores where a rule settles them, raw signals otherwise) and an overall only
through a map calibrated on half the team's labels; anything it cannot judge is ``None`` with the
reason in ``reasons``. Every verdict names its judge.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from todeval.evals.proactive_schema import ChatMessage, Environment, TargetPlan

ROLE = "guidance_judge"


@dataclass(frozen=True)
class GuidanceVerdict:
    """One judge's reading of one guidance dialogue.

    Attributes:
        judge: The spec that judged.
        overall: The 1-10 guidance score, or None when the judge could not give one.
        overall_basis: How ``overall`` was reached (the paper's prompt, or the local map and
            where it was calibrated), or why it is None.
        dimensions: Listing 12's five dimensions, 1-10 where the judge scored them, else None.
        reasons: Per dimension, why it is None or what settled it.
        signals: What a local judge measured (message lengths, leaks, coverage...); empty for
            an LLM judge.
        rationale: The LLM judge's ``thought``.
    """

    judge: str
    overall: int | None
    overall_basis: str
    dimensions: dict[str, int | None] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)
    signals: Mapping[str, Any] = field(default_factory=dict)
    rationale: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """The verdict as a result line stores it."""
        return {
            "judge": self.judge,
            "overall": self.overall,
            "overall_basis": self.overall_basis,
            "dimensions": dict(self.dimensions),
            "reasons": dict(self.reasons),
            "signals": dict(self.signals),
            "rationale": self.rationale,
        }


class GuidanceJudge(Protocol):
    """Anything that scores how well an agent guided a user to the target."""

    name: str

    def judge(
        self,
        environment: Environment,
        reference: TargetPlan,
        messages: Sequence[ChatMessage],
        *,
        max_turns: int = 6,
    ) -> GuidanceVerdict:
        """Score the dialogue ``messages`` (the agent opens) against the target and sub-targets.

        ``max_turns`` is the protocol's turn limit (the paper: 6): a dialogue that ends before
        it was stopped by the simulator because the target was reached.
        """
        ...
