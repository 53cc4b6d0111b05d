"""An LLM final-check member: Listing 10 verbatim."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, Field, field_validator

from todeval.evals.proactive_schema import Environment, TargetPlan
from todeval.nodes.judges.llm_role import LLMRole
from todeval.nodes.judges.result import JudgeResult
from todeval.nodes.proactive.judges.final_check.role import ROLE
from todeval.nodes.proactive.text import render_environment
from todeval.nodes.prompts.proactive import FINAL_CHECK_PROMPT, domain_description


class FinalCheckOutput(BaseModel):
    """Listing 10's JSON (``"judge": "True"/"False"``, or a JSON boolean)."""

    reason: str = Field(default="", description="The reasoning, in 2-3 sentences.")
    judge: bool = Field(description="Whether the target is the best target.")

    @field_validator("judge", mode="before")
    @classmethod
    def _word(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip().lower() in {"true", "false"}:
            return value.strip().lower() == "true"
        return value


class LLMFinalCheck(LLMRole[FinalCheckOutput]):
    """One call per reference."""

    role = ROLE
    prompt = FINAL_CHECK_PROMPT
    output_model = FinalCheckOutput

    def check(
        self, domain: str, environment: Environment, reference: TargetPlan
    ) -> JudgeResult[bool]:
        """No answer is None with the reason."""
        result = self.llm.invoke(
            {
                "description": domain_description(domain),
                "environment": render_environment(environment),
                "target": reference.target,
                "sub_targets": json.dumps(reference.sub_target, ensure_ascii=False),
            }
        )
        if result.value is None:
            return JudgeResult(None, self.name, result.reason)
        return JudgeResult(result.value.judge, self.name, result.value.reason.strip())
