"""Goal success (Mind the Goal) inside ``todeval evaluate``: its part of each line and summary."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from todeval.evals.metrics.goal_success.tally import GoalSuccessTally
from todeval.evals.metrics.suite_tally import TallySettings
from todeval.evals.record_views import EvaluationRecord
from todeval.evals.results import ThreadResult


@dataclass
class GoalSuccessSuite:
    """The goals of each record, pooled as ``todeval goal-success`` pools them."""

    tally: GoalSuccessTally = field(default_factory=GoalSuccessTally)

    @classmethod
    def start(cls, settings: TallySettings) -> GoalSuccessSuite:
        """A new tally for one run."""
        return cls()

    def see(self, record: EvaluationRecord) -> None:
        """Nothing to note about records goal success did not run on."""

    def add(self, record: EvaluationRecord, result: ThreadResult) -> dict[str, Any]:
        """``{"goals": [...]}``, with why there are none when segmentation says so."""
        goals = self.tally.add(record.dialogue, result)
        segmentation = (result.output or {}).get("segmentation") or {}
        if not goals and segmentation.get("reason"):  # no goals: say why, in the line
            return {"goals": goals, "unsegmented_reason": segmentation["reason"]}
        return {"goals": goals}

    def settled(self, part: dict[str, Any]) -> bool:
        """Whether the part is as ``results.jsonl``'s dump would leave it.

        :class:`GoalLine` rows whose one float field is finite (the dump writes a NaN there as
        null), and no raw reason.
        """
        return "unsegmented_reason" not in part and all(
            credit is None or math.isfinite(credit)
            for credit in (goal["fractional_credit"] for goal in part["goals"])
        )

    @property
    def count(self) -> int:
        """Dialogues scored."""
        return self.tally.dialogues

    def summary(self, judges: Mapping[str, Any]) -> dict[str, Any]:
        """The goal-success command's summary."""
        return self.tally.summary(judges)
