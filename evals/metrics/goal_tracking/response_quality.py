"""Response quality (ATOD, paper 000, §6.3): turn-level relevance and dialogue-level coherence.

Each dialogue's scores come from the ``response_quality`` judge role (G-Eval style, 1-5) as
``{"turn_level", "dialogue_level", "reason"}``; the corpus figure is their mean over the
dialogues that were scored. The local role scores nothing, so the figure is None with its
reason (the most frequent one a dialogue gave).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from todeval.evals.metrics.goal_tracking.goal_records import round4
from todeval.evals.metrics.running import RunningMean


def response_quality_row(scores: Mapping[str, Any] | None) -> dict[str, float | None]:
    """A dialogue's ``turn_quality`` and ``dialogue_quality`` (None when not scored)."""
    scores = scores or {}
    return {
        "turn_quality": scores.get("turn_level"),
        "dialogue_quality": scores.get("dialogue_level"),
    }


def response_quality_report(
    rows: Iterable[Mapping[str, Any]], reasons: Counter[str]
) -> dict[str, Any]:
    """``{"turn_level", "dialogue_level", "n_dialogues", "reason"}`` over the scored dialogues."""
    counts = ResponseQualityCounts(reasons=Counter(reasons))
    for row in rows:
        counts.add(row)
    return counts.report()


@dataclass
class ResponseQualityCounts:
    """:func:`response_quality_report` one dialogue at a time: the scores' sums, the reasons."""

    turn: RunningMean = field(default_factory=RunningMean)
    dialogue: RunningMean = field(default_factory=RunningMean)
    reasons: Counter[str] = field(default_factory=Counter)
    """Why dialogues were not scored, with how many said so."""

    def add(self, row: Mapping[str, Any], reason: str | None = None) -> None:
        """Count one dialogue's row (:func:`response_quality_row`) and the judge's reason."""
        if row.get("turn_quality") is not None:
            self.turn.add(float(row["turn_quality"]))
        if row.get("dialogue_quality") is not None:
            self.dialogue.add(float(row["dialogue_quality"]))
        if reason:
            self.reasons[reason] += 1

    def merge(self, other: ResponseQualityCounts) -> None:
        """Add the dialogues ``other`` counted."""
        self.turn.merge(other.turn)
        self.dialogue.merge(other.dialogue)
        self.reasons.update(other.reasons)

    def report(self) -> dict[str, Any]:
        """:func:`response_quality_report` of the dialogues counted."""
        reason = None
        if not self.dialogue.n:
            reasons = self.reasons
            reason = reasons.most_common(1)[0][0] if reasons else "no response-quality judge ran"
        return {
            "turn_level": round4(self.turn.value()),
            "dialogue_level": round4(self.dialogue.value()),
            "n_dialogues": self.dialogue.n,
            "reason": reason,
        }
