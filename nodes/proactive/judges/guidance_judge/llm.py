"""The LLM guidance judge: Listing 12 verbatim, one call per dialogue, the paper's 1-10 score."""

from __future__ import annotations

import json
from collections.abc import Sequence

from pydantic import BaseModel, Field

from todeval.evals.proactive_schema import ChatMessage, Environment, TargetPlan
from todeval.nodes.judges.llm_role import LLMRole
from todeval.nodes.proactive.judges.guidance_judge.role import ROLE, GuidanceVerdict
from todeval.nodes.proactive.text import render_conversation
from todeval.nodes.prompts.proactive import GUIDANCE_PROMPT

BASIS = "the paper's Listing 12 prompt"


class GuidanceOutput(BaseModel):
    """Listing 12's JSON."""

    thought: str = Field(default="", description="The judge's reasoning, within 100 words.")
    score: int = Field(ge=1, le=10, description="The guidance score, 1-10.")


class LLMGuidanceJudge(LLMRole[GuidanceOutput]):
    """Scores the whole dialogue once; the paper's judge gives no per-dimension scores."""

    role = ROLE
    prompt = GUIDANCE_PROMPT
    output_model = GuidanceOutput

    def judge(
        self,
        environment: Environment,
        reference: TargetPlan,
        messages: Sequence[ChatMessage],
        *,
        max_turns: int = 6,
    ) -> GuidanceVerdict:
        """One call; no answer leaves the score None with the reason."""
        result = self.llm.invoke(
            {
                "user_information": environment.user_information,
                "trigger_factor": environment.trigger_factor,
                "target": reference.target,
                "sub_target": json.dumps(reference.sub_target, ensure_ascii=False),
                "conversation": render_conversation(messages),
            }
        )
        if result.value is None:
            reason = f"not scored: {result.reason or 'the judge gave no answer'}"
            return GuidanceVerdict(self.name, None, reason)
        return GuidanceVerdict(
            self.name, result.value.score, BASIS, rationale=result.value.thought.strip()
        )
