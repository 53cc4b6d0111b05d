"""The guidance-judge role: how well the agent led the user to the target, 1-10 (Listing 12).

* ``local`` - :class:`~.local.LocalGuidanceJudge`, a stand-in: the rubric sub-scores it can
  compute (message length, metadata leaks, "It sounds like" openers, pressure, front-loading,
  sub-target coverage), None for the rest, and an overall through a map calibrated on half the
  team's labels.
* ``<provider>:<model>`` - Listing 12 verbatim through :class:`LLMRole` (the paper: GPT-4o).
"""

from __future__ import annotations

import functools
from pathlib import Path

import todeval.nodes.proactive.judges.guidance_judge.local  # noqa: F401  (registers the local judge)
from todeval.nodes.judges import resolve_judge
from todeval.nodes.judges.validity import register_cards
from todeval.nodes.proactive.judges.guidance_judge.llm import LLMGuidanceJudge
from todeval.nodes.proactive.judges.guidance_judge.role import ROLE, GuidanceJudge, GuidanceVerdict

register_cards(ROLE, Path(__file__).parent / "validity.json")


@functools.lru_cache(maxsize=16)
def guidance_judge(spec: str, max_retries: int = 3) -> GuidanceJudge:
    """The judge for ``spec`` (built once per spec; raises on unknown specs)."""
    judge: GuidanceJudge = resolve_judge(
        ROLE, spec, lambda parsed: LLMGuidanceJudge(parsed, max_retries=max_retries)
    )
    return judge


__all__ = ["ROLE", "GuidanceJudge", "GuidanceVerdict", "guidance_judge"]
