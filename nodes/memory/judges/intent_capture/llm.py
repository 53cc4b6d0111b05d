"""The LLM intent capture: MAP's intent capture prompt (App. A.2) through LLMRole."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pydantic import BaseModel, Field

from todeval.evals.memory_words import intent_in_words
from todeval.nodes.judges.llm_role import LLMRole
from todeval.nodes.memory.judges.intent_capture.role import INTENT_ROLE, CapturedIntent, Turns
from todeval.nodes.memory.judges.units import render_context
from todeval.nodes.prompts.memory import INTENT_CAPTURE_PROMPT


class LLMIntentOutput(BaseModel):
    """The intent capture prompt's JSON."""

    intent_description: str = Field(min_length=1, description="k_i, one sentence.")


class LLMIntentCapture(LLMRole[LLMIntentOutput]):
    """The intent capture prompt through :class:`LLMJudge`."""

    role = INTENT_ROLE
    prompt = INTENT_CAPTURE_PROMPT
    output_model = LLMIntentOutput

    def capture(
        self,
        context: Turns,
        intent: str,
        *,
        known_values: Iterable[tuple[str, str]] = (),
        service: str | None = None,
        attributes: Sequence[str] = (),
    ) -> CapturedIntent:
        """One call; the model reads the values from the dialogue itself."""
        result = self.llm.invoke(
            {
                "intent": intent_in_words(intent) if intent else "unknown",
                "conversation_history": render_context(context),
            }
        )
        value = result.value
        return CapturedIntent(
            intent=intent,
            intent_description=value.intent_description.strip() if value else None,
            judge=self.name,
            reason=result.reason if value is None else None,
        )
