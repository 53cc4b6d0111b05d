"""The LLM target-reached check: todeval's own prompt (the paper prints none), one call a turn."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from todeval.evals.proactive_schema import ChatMessage, TargetPlan
from todeval.nodes.judges.llm_role import LLMRole
from todeval.nodes.proactive.judges.target_reached.role import ROLE, ReachedVerdict
from todeval.nodes.proactive.live_prompts import TARGET_REACHED_PROMPT
from todeval.nodes.proactive.text import render_conversation


class ReachedOutput(BaseModel):
    """The check's JSON."""

    reason: str = Field(default="", description="Why, in 1-2 sentences.")
    reached: bool = Field(description="True when the user agreed to or did the target.")


class LLMTargetReached(LLMRole[ReachedOutput]):
    """See the module docstring; no usable answer leaves ``reached`` None with the reason."""

    role = ROLE
    prompt = TARGET_REACHED_PROMPT
    output_model = ReachedOutput

    def check(self, reference: TargetPlan, messages: Sequence[ChatMessage]) -> ReachedVerdict:
        """One call on the conversation so far."""
        result = self.llm.invoke(
            {
                "target": reference.target,
                "sub_target": "; ".join(reference.sub_target),
                "conversation": render_conversation(messages),
            }
        )
        if result.value is None:
            return ReachedVerdict(None, self.name, result.reason or "no usable answer")
        return ReachedVerdict(result.value.reached, self.name, result.value.reason)
