"""What the segmentation role decides and returns: ``is_new_goal`` per turn (paper 004, §4.1)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from todeval.evals.schema import Dialogue

ROLE = "segmentation"


@dataclass(frozen=True)
class SegmentationVerdict:
    """A judge's labels for one dialogue; turn 1 is always a new goal."""

    is_new_goal: list[bool | None]
    judge: str
    probabilities: list[float | None] | None = None
    reason: str | None = None


class SegmentationJudge(Protocol):
    """Anything that labels every turn of a dialogue with ``is_new_goal``."""

    name: str

    def prepare(self, dialogues: Sequence[Dialogue]) -> None:
        """Batch work for dialogues about to be segmented (may do nothing)."""
        ...

    def segment(
        self, dialogue: Dialogue, *, time_gap_minutes: float, threshold: float | None
    ) -> SegmentationVerdict:
        """Label each turn of ``dialogue``."""
        ...
