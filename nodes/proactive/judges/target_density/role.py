"""What the target-density role returns: the sub-targets each agent message carries (Listing 13).

Target density is the mean count per agent message; initiation density is the count in the
opening message (paper 003, "More Pushy Message Content"). A message the judge could not read
is ``None`` with a reason, and the densities are over the messages it did read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from todeval.evals.metrics.proactive.density import initiation_density, target_density

ROLE = "target_density"


@dataclass(frozen=True)
class DensityVerdict:
    """Per agent message, how many sub-targets it carries, and who counted.

    Attributes:
        judge: The spec that counted.
        counts: Sub-targets per agent message, in order; None where not judged.
        covered: Per message, the 0-based sub-targets it carries, when the judge can say which
            (the local judge can; Listing 13 asks an LLM only for a count).
        reasons: Per message, why it is None (or None).
    """

    judge: str
    counts: list[int | None]
    covered: list[list[int]] | None = None
    reasons: list[str | None] = field(default_factory=list)

    @property
    def target_density(self) -> float | None:
        """Mean sub-targets per judged agent message."""
        return target_density(self.counts)

    @property
    def initiation_density(self) -> int | None:
        """Sub-targets in the opening agent message."""
        return initiation_density(self.counts)

    def coverage(self, n_sub_targets: int) -> list[int] | None:
        """0-based sub-targets carried by any message (None when the judge cannot say which)."""
        if self.covered is None:
            return None
        return sorted({i for message in self.covered for i in message if i < n_sub_targets})


class TargetDensityJudge(Protocol):
    """Anything that counts the sub-targets in each agent message."""

    name: str

    def count(self, sub_targets: Sequence[str], messages: Sequence[str]) -> DensityVerdict:
        """Count, for each of ``messages`` (the agent's), the sub-targets it carries."""
        ...
