"""What a target-planning judge returns: a plan's 1-10 score against the reference (Listing 11).

10 means the plan is better than the reference; 1-9 worse. The paper's judge gives the score
and a reason. The local judge gives the sub-scores it can compute (how close the target and
sub-targets are to the reference's, which of the reference's entities the plan keeps, whether
it keeps Listing 4's format) and a score only through a map calibrated on half the team's
labelled plans.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from todeval.evals.proactive_schema import Environment, TargetPlan

ROLE = "target_planning_judge"


@dataclass(frozen=True)
class PlanVerdict:
    """One judge's score of one plan.

    Attributes:
        judge: The spec that judged.
        score: 1-10, or None when the judge could not give one.
        basis: How the score was reached, or why it is None.
        sub_scores: What a local judge measured (similarities, entity recall, format).
        rationale: The LLM judge's reason.
    """

    judge: str
    score: int | None
    basis: str
    sub_scores: Mapping[str, Any] = field(default_factory=dict)
    rationale: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """The verdict as a result line stores it."""
        return {
            "judge": self.judge,
            "score": self.score,
            "basis": self.basis,
            "sub_scores": dict(self.sub_scores),
            "rationale": self.rationale,
        }


class TargetPlanningJudge(Protocol):
    """Anything that scores a plan against an environment's reference."""

    name: str

    def judge(
        self, domain: str, environment: Environment, reference: TargetPlan, plan: TargetPlan
    ) -> PlanVerdict:
        """Score ``plan`` against ``reference`` in ``environment`` (a ``domain`` item)."""
        ...
