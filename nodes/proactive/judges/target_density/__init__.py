"""The target-density role: sub-targets per agent message (ProactiveEval Listing 13).

* ``local`` - :class:`~.local.LocalTargetDensity`: MiniLM and word overlap per sentence, cut
  points fit on half the team-labelled dialogues; says which sub-targets each message carries.
* ``<provider>:<model>`` - Listing 13 verbatim through :class:`LLMRole`, one call per message.
"""

from __future__ import annotations

import functools
from pathlib import Path

import todeval.nodes.proactive.judges.target_density.local  # noqa: F401  (registers the local judge)
from todeval.nodes.judges import resolve_judge
from todeval.nodes.judges.validity import register_cards
from todeval.nodes.proactive.judges.target_density.llm import LLMTargetDensity
from todeval.nodes.proactive.judges.target_density.role import (
    ROLE,
    DensityVerdict,
    TargetDensityJudge,
)

register_cards(ROLE, Path(__file__).parent / "validity.json")


@functools.lru_cache(maxsize=16)
def target_density_judge(spec: str, max_retries: int = 3) -> TargetDensityJudge:
    """The judge for ``spec`` (built once per spec; raises on unknown specs)."""
    judge: TargetDensityJudge = resolve_judge(
        ROLE, spec, lambda parsed: LLMTargetDensity(parsed, max_retries=max_retries)
    )
    return judge


__all__ = ["ROLE", "DensityVerdict", "TargetDensityJudge", "target_density_judge"]
