"""The target-planning-judge role: a plan's 1-10 score against the reference (Listing 11).

* ``local`` - :class:`~.local.LocalTargetPlanningJudge`, a stand-in: MiniLM closeness of target
  and sub-targets to the reference, kept entities and words, Listing 4's format; a score only
  through a map calibrated on half the team's labelled plans.
* ``<provider>:<model>`` - Listing 11 verbatim through :class:`LLMRole` (the paper: GPT-4o).
"""

from __future__ import annotations

import functools
from pathlib import Path

import todeval.nodes.proactive.judges.target_planning_judge.local  # noqa: F401  (registers the local judge)
from todeval.nodes.judges import resolve_judge
from todeval.nodes.judges.validity import register_cards
from todeval.nodes.proactive.judges.target_planning_judge.llm import LLMTargetPlanningJudge
from todeval.nodes.proactive.judges.target_planning_judge.role import (
    ROLE,
    PlanVerdict,
    TargetPlanningJudge,
)

register_cards(ROLE, Path(__file__).parent / "validity.json")


@functools.lru_cache(maxsize=16)
def target_planning_judge(spec: str, max_retries: int = 3) -> TargetPlanningJudge:
    """The judge for ``spec`` (built once per spec; raises on unknown specs)."""
    judge: TargetPlanningJudge = resolve_judge(
        ROLE, spec, lambda parsed: LLMTargetPlanningJudge(parsed, max_retries=max_retries)
    )
    return judge


__all__ = ["ROLE", "PlanVerdict", "TargetPlanningJudge", "target_planning_judge"]
