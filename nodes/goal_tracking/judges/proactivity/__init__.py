"""The proactivity role (paper 000, §6.2): judging the proactive actions a tracker found.

* ``local`` - :class:`~.local.LocalProactivityJudge`: the user's reaction and the goal's outcome.
* ``<provider>:<model>`` - :class:`~.llm.LLMProactivityJudge`: :data:`PROACTIVITY_PROMPT`.
"""

from __future__ import annotations

import functools

import todeval.nodes.goal_tracking.judges.proactivity.local  # noqa: F401  (registers it)
from todeval.nodes.goal_tracking.judges.proactivity.llm import LLMProactivityJudge
from todeval.nodes.goal_tracking.judges.proactivity.role import ROLE, ProactivityJudge
from todeval.nodes.judges import resolve_judge


@functools.lru_cache(maxsize=8)
def proactivity_judge(spec: str = "local", max_retries: int = 3) -> ProactivityJudge:
    """The judge for ``spec`` (built once; raises on unknown specs)."""
    judge: ProactivityJudge = resolve_judge(
        ROLE, spec, lambda parsed: LLMProactivityJudge(parsed, max_retries=max_retries)
    )
    return judge


__all__ = ["ROLE", "ProactivityJudge", "proactivity_judge"]
