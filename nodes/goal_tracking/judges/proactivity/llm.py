"""The LLM proactivity judge: :data:`PROACTIVITY_PROMPT`, one call per action (§6.2)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from todeval.evals.metrics.goal_tracking.proactive_actions import ProactiveAction
from todeval.nodes.goal_tracking.judges.proactivity.role import ROLE
from todeval.nodes.judges.llm import LLMJudge
from todeval.nodes.judges.result import JudgeResult
from todeval.nodes.judges.spec import JudgeSpec
from todeval.nodes.prompts.goal_tracking import PROACTIVITY_PROMPT


class ProactivityOutput(BaseModel):
    """The prompt's JSON."""

    appropriate: bool = Field(description="Timely and relevant to the user's goals.")
    beneficial: bool = Field(description="It moved the user's goals forward.")
    reason: str = Field(default="", description="One sentence why.")


class LLMProactivityJudge:
    """The proactivity prompt through one LLM spec.

    Args:
        spec: The LLM spec.
        max_retries: Retries after a malformed answer.
        **llm_kwargs: Passed to :class:`LLMJudge`.
    """

    def __init__(self, spec: JudgeSpec | str, *, max_retries: int = 3, **llm_kwargs: Any) -> None:
        self.llm: LLMJudge[ProactivityOutput] = LLMJudge(
            role=ROLE, spec=spec, prompt=PROACTIVITY_PROMPT, output_model=ProactivityOutput,
            max_retries=max_retries, **llm_kwargs,
        )  # fmt: skip
        self.name = self.llm.spec.raw

    def judge(self, action: ProactiveAction) -> JudgeResult[bool]:
        """Appropriate and beneficial, or None with the reason the call failed."""
        result = self.llm.invoke(
            {"context": action.context, "kind": action.kind, "goal": action.goal,
             "status": action.status, "utterance": action.utterance,
             "reaction": action.reaction or "(the dialogue ends)",
             "final_status": action.final_status}
        )  # fmt: skip
        if result.value is None:
            return JudgeResult(None, self.name, result.reason)
        verdict = result.value.appropriate and result.value.beneficial
        return JudgeResult(verdict, self.name, result.value.reason or None)
