"""What the session summarizer returns: a short summary of one stored session (MAP Table 4)."""

from __future__ import annotations

from typing import Protocol

from todeval.evals.memory_schema import MsTodSession
from todeval.nodes.judges.result import JudgeResult

ROLE = "memory_summarizer"


class SessionSummarizer(Protocol):
    """Writes a concise summary of a stored session (the summary-based memory baseline)."""

    name: str

    def summarize(self, session: MsTodSession) -> JudgeResult[str]:
        """The session's summary, or ``value=None`` with the reason."""
        ...
