"""The response-quality role (paper 000, §6.3): G-Eval-style relevance and coherence.

* ``local`` - :class:`~.local.LocalResponseQuality`: None with the reason (no local judge).
* ``<provider>:<model>`` - :class:`~.llm.LLMResponseQuality`: :data:`RESPONSE_QUALITY_PROMPT`.
"""

from __future__ import annotations

import functools

import todeval.nodes.goal_tracking.judges.response_quality.local  # noqa: F401  (registers it)
from todeval.nodes.goal_tracking.judges.response_quality.llm import LLMResponseQuality
from todeval.nodes.goal_tracking.judges.response_quality.role import (
    ROLE,
    ResponseQuality,
    ResponseQualityJudge,
)
from todeval.nodes.judges import resolve_judge


@functools.lru_cache(maxsize=8)
def response_quality_judge(spec: str = "local", max_retries: int = 3) -> ResponseQualityJudge:
    """The judge for ``spec`` (built once; raises on unknown specs)."""
    judge: ResponseQualityJudge = resolve_judge(
        ROLE, spec, lambda parsed: LLMResponseQuality(parsed, max_retries=max_retries)
    )
    return judge


__all__ = ["ROLE", "ResponseQuality", "ResponseQualityJudge", "response_quality_judge"]
