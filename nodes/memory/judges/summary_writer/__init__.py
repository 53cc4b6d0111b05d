"""The ``memory_summarizer`` role: session summaries for the summary-based baseline (MAP).

MAP (paper 001) compares its QA memory with "a summarization-based baseline inspired by
ChatCite, which produces concise history summaries for each session" (§5.1, Table 4; the case
study's "Hybrid RAG retrieving a summary", Fig. 5). The paper prints no summary prompt;
:data:`~nodes.prompts.memory.SESSION_SUMMARY_PROMPT` is written from that description.

* ``<provider>:<model>``: one call per stored session.
* ``local``: no summary, with the reason. A local stand-in would have to read the session's
  values from its stored task goal, which is the QA memory under another name, so the summary
  settings are null under local judges rather than a disguised copy of MAP's memory.
"""

from __future__ import annotations

import functools

from todeval.nodes.judges.spec import JudgeSpecError, parse_spec
from todeval.nodes.memory.judges.summary_writer.llm import LLMSessionSummarizer
from todeval.nodes.memory.judges.summary_writer.local import LocalSessionSummarizer
from todeval.nodes.memory.judges.summary_writer.role import ROLE, SessionSummarizer


@functools.lru_cache(maxsize=8)
def session_summarizer(spec: str = "local") -> SessionSummarizer:
    """The summarizer for ``spec`` (built once per spec).

    Raises:
        JudgeSpecError: The spec is malformed or names an unknown local variant.
    """
    parsed = parse_spec(spec)
    if not parsed.is_local:
        return LLMSessionSummarizer(parsed)
    if parsed.variant not in (None, "default"):
        raise JudgeSpecError(f"{ROLE}: no local variant {parsed.variant!r}")
    return LocalSessionSummarizer()


__all__ = ["session_summarizer"]
