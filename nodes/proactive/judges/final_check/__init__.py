"""The final-check role: a panel member's verdict on whether the reference is the best target.

* ``local:grounded``, ``local:format``, ``local:domain-action`` - rule checks (see local).
* ``<provider>:<model>`` - Listing 10 verbatim (:class:`~.llm.LLMFinalCheck`).
"""

from __future__ import annotations

import functools

import todeval.nodes.proactive.judges.final_check.local  # noqa: F401  (registers the local checks)
from todeval.nodes.judges import resolve_judge
from todeval.nodes.proactive.judges.final_check.llm import LLMFinalCheck
from todeval.nodes.proactive.judges.final_check.role import ROLE, FinalCheck


@functools.lru_cache(maxsize=16)
def final_check(spec: str, max_retries: int = 3) -> FinalCheck:
    """The member for ``spec`` (built once per spec; raises on unknown specs)."""
    member: FinalCheck = resolve_judge(
        ROLE, spec, lambda parsed: LLMFinalCheck(parsed, max_retries=max_retries)
    )
    return member


__all__ = ["ROLE", "FinalCheck", "final_check"]
