"""The memory baselines' LLM calls, each costed per call (paper 000, §7, Figure 4).

:class:`MemoryTrackerJudge` answers with every goal and its status from what a method recalled
(:data:`MEMORY_TRACKER_PROMPT`); :class:`RsumWriter` rewrites LLM-Rsum's running summary and
:class:`MemoWriter` writes MemoChat's memos. The full-context baseline is
:class:`~nodes.goal_tracking.baselines.full_context.FullContextJudge`.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from todeval.nodes.goal_tracking.baselines.full_context import FullContextOutput
from todeval.nodes.goal_tracking.judges.goal_extraction.llm import STATUSES
from todeval.nodes.judges.costed import CostedJudge
from todeval.nodes.judges.spec import JudgeSpec
from todeval.nodes.prompts.goal_tracking import (
    GOAL_TRACKER_SYSTEM_PROMPT,
    MEMOCHAT_MEMO_PROMPT,
    MEMORY_TRACKER_PROMPT,
    RSUM_UPDATE_PROMPT,
)

METHOD_NAMES = {
    "rag": "retrieval-augmented generation (RAG): the passages retrieved for this utterance",
    "rsum": "recursive summarisation (LLM-Rsum): a running summary of the dialogue",
    "memochat": "memos (MemoChat): topic memos of earlier spans and the current span",
    "memorybank": "a memory bank with forgetting (MemoryBank): the memories recalled now",
}
"""``{method}`` of the tracker prompt, per baseline."""


class SummaryOutput(BaseModel):
    """LLM-Rsum's summary."""

    summary: str = Field(description="The updated running summary.")


class Memo(BaseModel):
    """One MemoChat memo."""

    topic: str = Field(description="The memo's topic (a goal or request).")
    summary: str = Field(default="", description="What was said about it and where it stands.")


class MemosOutput(BaseModel):
    """MemoChat's memos for a span."""

    memos: list[Memo] = Field(default_factory=list, description="One memo per topic.")


class MemoryTrackerJudge(CostedJudge[FullContextOutput]):
    """Every goal with its status, from a method's recall."""

    system_prompt = GOAL_TRACKER_SYSTEM_PROMPT

    def __init__(self, spec: str | JudgeSpec, **kwargs: Any) -> None:
        super().__init__(
            "goal_memory_baseline", spec, MEMORY_TRACKER_PROMPT, FullContextOutput, **kwargs
        )

    def variables(self, method: str, **fields: Any) -> dict[str, Any]:
        """The prompt's fields for ``method`` (the rest as given)."""
        return {"method": METHOD_NAMES[method], "statuses": STATUSES} | fields


class RsumWriter(CostedJudge[SummaryOutput]):
    """LLM-Rsum's summary update."""

    def __init__(self, spec: str | JudgeSpec, **kwargs: Any) -> None:
        super().__init__("goal_rsum_summary", spec, RSUM_UPDATE_PROMPT, SummaryOutput, **kwargs)


class MemoWriter(CostedJudge[MemosOutput]):
    """MemoChat's memo writing."""

    def __init__(self, spec: str | JudgeSpec, **kwargs: Any) -> None:
        super().__init__("goal_memochat_memo", spec, MEMOCHAT_MEMO_PROMPT, MemosOutput, **kwargs)
