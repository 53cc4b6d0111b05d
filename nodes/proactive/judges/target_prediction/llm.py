"""An LLM difficulty-panel reasoner: predicts the target with Listing 4 at temperature 0."""

from __future__ import annotations

from todeval.evals.proactive_schema import Environment, TargetPlan
from todeval.nodes.judges.llm_role import LLMRole
from todeval.nodes.judges.result import JudgeResult
from todeval.nodes.proactive.judges.synthesis_writer.llm import TargetOutput
from todeval.nodes.proactive.judges.target_prediction.role import ROLE
from todeval.nodes.proactive.text import render_environment
from todeval.nodes.prompts.proactive import (
    TARGET_EXAMPLES,
    TARGET_GENERATION_PROMPT,
    domain_description,
)


class LLMTargetPredictor(LLMRole[TargetOutput]):
    """Listing 4 (the paper's reasoners are not given their own prompt)."""

    role = ROLE
    prompt = TARGET_GENERATION_PROMPT
    output_model = TargetOutput

    def predict(self, domain: str, environment: Environment) -> JudgeResult[TargetPlan]:
        """One call; no answer is None with the reason."""
        result = self.llm.invoke(
            {
                "description": domain_description(domain),
                "example": TARGET_EXAMPLES.get(domain, TARGET_EXAMPLES["recommendation"]),
                "environment": render_environment(environment),
            }
        )
        plan = result.value.plan() if result.value is not None else None
        return JudgeResult(plan, self.name, result.reason)
