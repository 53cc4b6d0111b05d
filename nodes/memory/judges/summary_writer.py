"""The ``memory_summarizer`` role: session summaries for the summary-based baseline (MAP).

MAP (paper 001) compares its QA memory with "a summarization-based baseline inspired by
ChatCite, which produces concise history summaries for each session" (§5.1, Table 4; the case
study's "Hybrid RAG retrieving a summary", Fig. 5). The paper prints no summary prompt;
:data:`~nodes.prompts.memory.SESSION_SUMMARY_PROMPT` is written from that description.

* ``<provider>:<model>``: one call per stored session (:class:`LLMSessionSummarizer`).
* ``local``: no summary, with :data:`NO_LOCAL_SUMMARY`. A local stand-in would have to read the
  session's values from its stored task goal, which is the QA memory under another name, so the
  summary settings are null under local judges rather than a disguised copy of MAP's memory.
"""

from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel, Field

from todeval.evals.memory_schema import MsTodSession
from todeval.evals.memory_words import intent_in_words
from todeval.nodes.judges.result import JudgeResult
from todeval.nodes.judges.roles import PromptJudge
from todeval.nodes.memory.judges.units import render_context

NO_LOCAL_SUMMARY = (
    "a session summary needs an LLM summarizer (--summarizer PROVIDER:MODEL); the local judge "
    "writes none rather than pass the session's stored slot values off as a summary"
)


class SessionSummarizer(Protocol):
    """Writes a concise summary of a stored session (the summary-based memory baseline)."""

    name: str

    def summarize(self, session: MsTodSession) -> JudgeResult[str]:
        """The session's summary, or ``value=None`` with the reason."""
        ...


class SummaryOutput(BaseModel):
    """The summary prompt's JSON."""

    summary: str = Field(min_length=1, description="A concise summary of the session.")


class LLMSessionSummarizer(PromptJudge[SummaryOutput]):
    """One call per stored session."""

    def summarize(self, session: MsTodSession) -> JudgeResult[str]:
        """The summary; ``value=None`` with the judge's reason when it gives none."""
        result = self.ask(
            intent=intent_in_words(session.intent),
            conversation_history=render_context(session.content),
        )
        value = result.value.summary.strip() if result.value else None
        return JudgeResult(value=value or None, judge=self.name, reason=result.reason)
