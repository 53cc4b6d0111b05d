"""Goal tracking (ATOD) inside ``todeval evaluate``: its part of each line and summary."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from todeval.evals.metrics.goal_tracking.tally import TrackedCorpusTally
from todeval.evals.metrics.suite_tally import TallySettings
from todeval.evals.record_views import EvaluationRecord, atod_view
from todeval.evals.results import ThreadResult, json_form


@dataclass
class GoalTrackingSuite:
    """Each record's tracked goals scored against its gold, as ``todeval goal-tracking`` does."""

    tally: TrackedCorpusTally

    @classmethod
    def start(cls, settings: TallySettings) -> GoalTrackingSuite:
        """A new tally for one run (goal names compared as the tracker named them)."""
        return cls(TrackedCorpusTally(named_by_schema=settings.named_by_schema))

    def see(self, record: EvaluationRecord) -> None:
        """Nothing to note about records goal tracking did not run on."""

    def add(self, record: EvaluationRecord, result: ThreadResult) -> dict[str, Any]:
        """The tracked dialogue's line with its figures row."""
        scored = self.tally.judged(record.atod or atod_view(record.dialogue), result)
        line, row = self.tally.add_scored(scored)
        return line | {"figures": json_form(row)}

    def settled(self, part: dict[str, Any]) -> bool:
        """Always: a second dump of the part would change nothing.

        The goals line is a :class:`TrackedDialogueLine` row (its typed fields hold strings),
        its figures are in :func:`json_form`.
        """
        return True

    @property
    def count(self) -> int:
        """Dialogues scored."""
        return self.tally.figures.n_dialogues

    def summary(self, judges: Mapping[str, Any]) -> dict[str, Any]:
        """The goal-tracking command's summary, with the evaluation's counts."""
        summary = self.tally.summary(dict(judges))
        section = summary | {
            "counts": {
                "dialogues": summary["n_dialogues"],
                "goals": summary["n_pred_goals"],
                "skipped_records": 0,
                "failed_dialogues": 0,
            }
        }
        for key in ("skipped", "failed"):
            section.pop(key, None)
        return section
