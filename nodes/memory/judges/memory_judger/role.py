"""What the memory judger returns: each activated unit's contribution to the task (MAP Eq. 2)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from todeval.evals.memory_schema import MemoryUnit

ROLE = "memory_judger"


class MemoryJudger(Protocol):
    """Scores activated memory units: ``P(unit contributes to the task goal)`` each."""

    name: str

    def score(
        self, context: str, missing_query: str, units: Sequence[MemoryUnit]
    ) -> list[float | None]:
        """One probability per unit (None where the judge could not judge)."""
        ...
