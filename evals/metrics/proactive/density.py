"""Target density (paper 003, "More Pushy Message Content"): sub-targets per agent message.

The paper reports the mean count per message (target density) and the count in the opening
message (initiation density): a model that front-loads every sub-target into its first message
has an initiation density far above its average. Counts a judge could not give are ``None``;
the figures are over the judged messages (``None`` when there are none).
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean


def target_density(counts: Sequence[int | None]) -> float | None:
    """Mean sub-targets per judged agent message."""
    judged = [c for c in counts if c is not None]
    return fmean(judged) if judged else None


def initiation_density(counts: Sequence[int | None]) -> int | None:
    """Sub-targets in the opening agent message (None when it was not judged)."""
    return counts[0] if counts else None
