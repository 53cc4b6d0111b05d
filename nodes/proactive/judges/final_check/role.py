"""The final check (Listing 10): is the reference the best target for its environment?

Before an item enters the dataset, a panel judges its reference; the item is kept when a
majority says it is the best target (the paper: five leading LLMs). A member that cannot judge
returns None with the reason and does not count toward the majority's denominator.
"""

from __future__ import annotations

from typing import Protocol

from todeval.evals.proactive_schema import Environment, TargetPlan
from todeval.nodes.judges.result import JudgeResult

ROLE = "final_check"


class FinalCheck(Protocol):
    """Anything that says whether the reference is the environment's best target."""

    name: str

    def check(
        self, domain: str, environment: Environment, reference: TargetPlan
    ) -> JudgeResult[bool]:
        """True when ``reference`` is the best target (the reason says why)."""
        ...
