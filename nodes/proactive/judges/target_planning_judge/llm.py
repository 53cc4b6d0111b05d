"""The LLM target-planning judge: Listing 11 verbatim, the paper's 1-10 score and reason."""

from __future__ import annotations

from pydantic import BaseModel, Field

from todeval.evals.proactive_schema import Environment, TargetPlan
from todeval.nodes.judges.llm_role import LLMRole
from todeval.nodes.proactive.judges.target_planning_judge.role import ROLE, PlanVerdict
from todeval.nodes.proactive.text import render_environment, render_plan
from todeval.nodes.prompts.proactive import (
    TARGET_PLANNING_EXAMPLES,
    TARGET_PLANNING_PROMPT,
    domain_description,
)

BASIS = "the paper's Listing 11 prompt"


class PlanningOutput(BaseModel):
    """Listing 11's JSON."""

    reason: str = Field(default="", description="The comparison, in 3-4 sentences.")
    score: int = Field(ge=1, le=10, description="10 if better than the reference, else 1-9.")


class LLMTargetPlanningJudge(LLMRole[PlanningOutput]):
    """One call per plan, with todeval's two in-context shots (the paper's are not printed)."""

    role = ROLE
    prompt = TARGET_PLANNING_PROMPT
    output_model = PlanningOutput

    def judge(
        self, domain: str, environment: Environment, reference: TargetPlan, plan: TargetPlan
    ) -> PlanVerdict:
        """One call; no answer leaves the score None with the reason."""
        result = self.llm.invoke(
            {
                "DOMAIN_DESCRIPTIONS": {"domain_name": domain_description(domain)},
                "environment": render_environment(environment),
                "reference": render_plan(reference),
                "generation": render_plan(plan),
                "examples": TARGET_PLANNING_EXAMPLES,
            }
        )
        if result.value is None:
            return PlanVerdict(
                self.name, None, f"not scored: {result.reason or 'the judge gave no answer'}"
            )
        return PlanVerdict(
            self.name, result.value.score, BASIS, rationale=result.value.reason.strip()
        )
