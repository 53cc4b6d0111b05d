"""The target-planning judge: a plan's 1-10 score against the reference (Listing 11).

10 means the plan is better than the reference; 1-9 worse. An LLM spec asks Listing 11
verbatim (:class:`LLMTargetPlanningJudge`, with todeval's two in-context shots: the paper's
are not printed).

``local`` (:class:`LocalTargetPlanningJudge`) is a stand-in, not Listing 11's judge: it
measures closeness to the reference (``features``) and cannot tell a better plan from a worse
one that stays close. Its 1-10 score is a linear map of those measurements fit on half the
team's labelled plans (``calibration.json``; held-out agreement on its validity card). A plan
copied from the environment (:func:`copied_from_environment`) names no action: it scores at most
:data:`COPY_CAP` by the team's anchors, and 1 less when it breaks Listing 4's format (issue 29).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, Field

from todeval.evals.proactive_schema import Environment, TargetPlan
from todeval.nodes.judges.roles import PromptJudge
from todeval.nodes.judges.vectors import Embed, VectorTable
from todeval.nodes.proactive.judges.calibration import calibrated_score
from todeval.nodes.proactive.judges.target_planning_judge.features import plan_features
from todeval.nodes.proactive.text import copied_share, render_environment, render_plan, said_words
from todeval.nodes.prompts.proactive import TARGET_PLANNING_EXAMPLES, domain_description

CALIBRATION_PATH = Path(__file__).with_name("calibration.json")

BASIS = "the paper's Listing 11 prompt"


@dataclass(frozen=True)
class PlanVerdict:
    """One judge's score of one plan (1-10, or None with the reason in ``basis``).

    ``sub_scores`` are what a local judge measured; ``rationale`` is the LLM judge's reason.
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


class PlanningOutput(BaseModel):
    """Listing 11's JSON."""

    reason: str = Field(default="", description="The comparison, in 3-4 sentences.")
    score: int = Field(ge=1, le=10, description="10 if better than the reference, else 1-9.")


COPY_CAP = 3
"""The most a plan copied from the environment scores (the anchors' 3: not built on the trigger's
point; issue 29: floor agents stay at the floor)."""

COPIED_SHARE = 0.8
"""Share of a plan's words copied from the environment text that makes it a copy."""


def copied_from_environment(environment: Environment, plan: TargetPlan) -> float:
    """Share of the plan's words (target and sub-targets) copied from the environment's text.

    Copied: in a run of :data:`~nodes.proactive.text.COPY_RUN` words or more found word for word.
    """
    source = f"{environment.user_information}\n{environment.trigger_factor}"
    parts = [plan.target, *plan.sub_target]
    sizes = [len(said_words(part)) for part in parts]
    copied = sum(copied_share(source, part) * size for part, size in zip(parts, sizes, strict=True))
    return copied / sum(sizes) if sum(sizes) else 0.0


class LocalTargetPlanningJudge:
    """MiniLM and word-match sub-scores; a 1-10 score only through the calibrated map."""

    name = "local"

    def __init__(self, embed: Embed | None = None, calibration: Path = CALIBRATION_PATH) -> None:
        self.vectors = VectorTable(embed)  # MiniLM, loaded on first use
        self.calibration = calibration

    def judge(
        self, domain: str, environment: Environment, reference: TargetPlan, plan: TargetPlan
    ) -> PlanVerdict:
        """The sub-scores of ``plan`` and, through the calibrated map, its 1-10 score."""
        if not plan.target.strip():
            return PlanVerdict(self.name, None, "not scored: the plan has no target")
        sub_scores = plan_features(reference, plan, self.vectors.embed)
        features = {
            key: (float(value) if isinstance(value, bool | int | float) else None)
            for key, value in sub_scores.items()
        }
        # A plan with no specific entity to keep has nothing to lose there.
        if features.get("entity_recall") is None:
            features["entity_recall"] = 1.0
        features["format_violated"] = 0.0 if sub_scores["format_ok"] else 1.0
        score, basis = calibrated_score(self.calibration, features, "the sub-scores")
        copied = copied_from_environment(environment, plan)
        sub_scores["environment_copied"] = round(copied, 4)
        cap = COPY_CAP - (0 if sub_scores["format_ok"] else 1)
        if copied >= COPIED_SHARE and score is not None and score > cap:
            score, basis = (
                cap,
                (
                    f"at most {cap}: {copied:.0%} of the plan is copied from the environment "
                    f"(at most {COPY_CAP}, 1 less for the format rule; was {score}: {basis})"
                ),
            )
        return PlanVerdict(self.name, score, basis, sub_scores)


class LLMTargetPlanningJudge(PromptJudge[PlanningOutput]):
    """One call per plan; no answer leaves the score None with the reason."""

    def judge(
        self, domain: str, environment: Environment, reference: TargetPlan, plan: TargetPlan
    ) -> PlanVerdict:
        """Listing 11 with the environment, the reference and the plan."""
        result = self.ask(
            DOMAIN_DESCRIPTIONS={"domain_name": domain_description(domain)},
            environment=render_environment(environment),
            reference=render_plan(reference),
            generation=render_plan(plan),
            examples=TARGET_PLANNING_EXAMPLES,
        )
        if result.value is None:
            reason = f"not scored: {result.reason or 'the judge gave no answer'}"
            return PlanVerdict(self.name, None, reason)
        return PlanVerdict(
            self.name, result.value.score, BASIS, rationale=result.value.reason.strip()
        )
