"""``local``: sub-targets per agent message from MiniLM and word overlap (see ``features``).

A stand-in for Listing 13's LLM count: it says *which* sub-targets a message carries, so the
guidance judge can also read front-loading and coverage from it. It never abstains on a message
it was given; a message that is empty carries nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from todeval.nodes.judges.local import register_local_judge
from todeval.nodes.judges.vectors import Embed, VectorTable
from todeval.nodes.proactive.judges.target_density.features import (
    CoverageCuts,
    calibrated_cuts,
    similarities,
)
from todeval.nodes.proactive.judges.target_density.role import ROLE, DensityVerdict


class LocalTargetDensity:
    """Counts the sub-targets each message carries (MiniLM cosine per sentence + word overlap).

    Args:
        embed: The embedding function; default MiniLM, loaded on first use.
        cuts: The cut points; default the calibrated ones.
    """

    name = "local"

    def __init__(self, embed: Embed | None = None, cuts: CoverageCuts | None = None) -> None:
        self.vectors = VectorTable(embed)  # MiniLM, loaded on first use
        self.cuts = cuts

    def count(self, sub_targets: Sequence[str], messages: Sequence[str]) -> DensityVerdict:
        """Per message, the sub-targets it carries and how many."""
        if not sub_targets or not messages:
            return DensityVerdict(self.name, [0] * len(messages), [[] for _ in messages])
        found = similarities(sub_targets, messages, self.vectors.embed)
        covered = found.covered(self.cuts or calibrated_cuts())
        which = [[int(j) for j in row.nonzero()[0]] for row in covered]
        return DensityVerdict(self.name, [len(w) for w in which], which, [None] * len(messages))


@register_local_judge(ROLE, "default", default=True)
def _local_density() -> LocalTargetDensity:
    return LocalTargetDensity()
