"""The difficulty-judge role: which of the panel's predicted targets match the reference.

* ``local`` - MiniLM cosine of the targets (:class:`~.local.LocalDifficultyJudge`).
* ``<provider>:<model>`` - todeval's own prompt (:class:`~.llm.LLMDifficultyJudge`).
"""

from __future__ import annotations

import functools

import todeval.nodes.proactive.judges.difficulty_judge.local  # noqa: F401  (registers the local judge)
from todeval.nodes.judges import resolve_judge
from todeval.nodes.proactive.judges.difficulty_judge.llm import LLMDifficultyJudge
from todeval.nodes.proactive.judges.difficulty_judge.role import ROLE, DifficultyJudge


@functools.lru_cache(maxsize=16)
def difficulty_judge(spec: str, max_retries: int = 3) -> DifficultyJudge:
    """The matcher for ``spec`` (built once per spec; raises on unknown specs)."""
    judge: DifficultyJudge = resolve_judge(
        ROLE, spec, lambda parsed: LLMDifficultyJudge(parsed, max_retries=max_retries)
    )
    return judge


__all__ = ["ROLE", "DifficultyJudge", "difficulty_judge"]
