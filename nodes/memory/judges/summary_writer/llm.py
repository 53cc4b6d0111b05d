"""The LLM summarizer: the session summary prompt through LLMRole."""

from __future__ import annotations

from pydantic import BaseModel, Field

from todeval.evals.memory_schema import MsTodSession
from todeval.evals.memory_words import intent_in_words
from todeval.nodes.judges.llm_role import LLMRole
from todeval.nodes.judges.result import JudgeResult
from todeval.nodes.memory.judges.summary_writer.role import ROLE
from todeval.nodes.memory.judges.units import render_context
from todeval.nodes.prompts.memory import SESSION_SUMMARY_PROMPT, SESSION_SUMMARY_SYSTEM_PROMPT


class SummaryOutput(BaseModel):
    """The summary prompt's JSON."""

    summary: str = Field(min_length=1, description="A concise summary of the session.")


class LLMSessionSummarizer(LLMRole[SummaryOutput]):
    """One call per stored session."""

    role = ROLE
    prompt = SESSION_SUMMARY_PROMPT
    system = SESSION_SUMMARY_SYSTEM_PROMPT
    output_model = SummaryOutput

    def summarize(self, session: MsTodSession) -> JudgeResult[str]:
        """The summary; ``value=None`` with the judge's reason when it gives none."""
        result = self.llm.invoke(
            {
                "intent": intent_in_words(session.intent),
                "conversation_history": render_context(session.content),
            }
        )
        value = result.value.summary.strip() if result.value else None
        return JudgeResult(value=value or None, judge=self.name, reason=result.reason)
