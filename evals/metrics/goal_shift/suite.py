"""Goal shift (AgentChangeBench) inside ``todeval evaluate``: its part of each line and summary."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from todeval.evals.metrics.goal_shift.summary import goal_shift_summary
from todeval.evals.metrics.suite_tally import TallySettings
from todeval.evals.record_views import EvaluationRecord
from todeval.evals.results import ThreadResult


@dataclass
class GoalShiftSuite:
    """Each transcript's TSR/TUE/TCRR/GSRT row, and every transcript's issues."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    issues: list[dict[str, Any]] = field(default_factory=list)
    """Every transcript's issues (unknown tools, orphan results, bad arguments, ...), whether
    or not its goal-shift metrics ran."""

    @classmethod
    def start(cls, settings: TallySettings) -> GoalShiftSuite:
        """A new tally for one run."""
        return cls()

    def see(self, record: EvaluationRecord) -> None:
        """Keep the transcript's issues."""
        if record.conversation is not None:
            self.issues.extend(i.model_dump() for i in record.conversation.issues)

    def add(self, record: EvaluationRecord, result: ThreadResult) -> dict[str, Any]:
        """The conversation's goal-shift row."""
        row = dict(result.output or {})
        self.rows.append(row)
        return row

    @property
    def count(self) -> int:
        """Conversations scored."""
        return len(self.rows)

    def summary(self, judges: Mapping[str, Any]) -> dict[str, Any]:
        """The goal-shift command's summary, with the transcripts' issues."""
        with_issues = {issue["dialogue_id"] for issue in self.issues}
        return goal_shift_summary(self.rows) | {
            "counts": {
                "conversations": len(self.rows),
                "conversations_with_issues": len(with_issues),
            },
            "judges": dict(judges),
            "issues": self.issues,
        }
