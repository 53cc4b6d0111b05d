"""The target-reached role: has the user reached the target? Asked after each guidance turn.

todeval's own check (the paper's GPT-4o decides with a prompt it does not print):

* ``local`` - :class:`~.local.LocalTargetReached`: the final step put, and the user agreed.
* ``<provider>:<model>`` - todeval's own prompt (:data:`~nodes.proactive.live_prompts.
  TARGET_REACHED_PROMPT`) through :class:`LLMRole`.
"""

from __future__ import annotations

import functools

import todeval.nodes.proactive.judges.target_reached.local  # noqa: F401  (registers the local judge)
from todeval.nodes.judges import resolve_judge
from todeval.nodes.proactive.judges.target_reached.llm import LLMTargetReached
from todeval.nodes.proactive.judges.target_reached.role import (
    ROLE,
    ReachedVerdict,
    TargetReachedJudge,
)


@functools.lru_cache(maxsize=16)
def target_reached_judge(spec: str, max_retries: int = 3) -> TargetReachedJudge:
    """The check for ``spec`` (built once per spec; raises on unknown specs)."""
    judge: TargetReachedJudge = resolve_judge(
        ROLE, spec, lambda parsed: LLMTargetReached(parsed, max_retries=max_retries)
    )
    return judge


__all__ = ["ROLE", "ReachedVerdict", "TargetReachedJudge", "target_reached_judge"]
