"""The local summarizer: writes no summary (null with the reason)."""

from __future__ import annotations

from todeval.evals.memory_schema import MsTodSession
from todeval.nodes.judges.result import JudgeResult

NO_LOCAL_SUMMARY = (
    "a session summary needs an LLM summarizer (--summarizer PROVIDER:MODEL); the local judge "
    "writes none rather than pass the session's stored slot values off as a summary"
)


class LocalSessionSummarizer:
    """``local``: no summary, with the reason (an extract of the task goal would be QA memory)."""

    name = "local"

    def summarize(self, session: MsTodSession) -> JudgeResult[str]:
        """Always ``None``."""
        return JudgeResult(value=None, judge=self.name, reason=NO_LOCAL_SUMMARY)
