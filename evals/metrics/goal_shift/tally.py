"""Goal-shift metrics over a run, as conversations stream in (AgentChangeBench, paper 002).

:meth:`GoalShiftTally.summary` pools the graph's rows into TSR, TUE, TCRR, GSRT and pass^k
(:func:`~evals.metrics.goal_shift.summary.goal_shift_summary`) and counts what was not scored.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from todeval.evals.goal_shift_schema import Conversation
from todeval.evals.metrics.goal_shift.summary import Compat, goal_shift_summary
from todeval.evals.results import ThreadResult, skipped_row, usable_result
from todeval.evals.schema import RecordError


class GoalShiftTally:
    """The rows of a goal-shift run, its skipped records and failed conversations.

    Args:
        skipped: Records the loader already could not read (e.g. tasks with errors).
    """

    def __init__(self, skipped: Iterable[RecordError] = ()) -> None:
        self.rows: list[dict[str, Any]] = []
        self.skipped = [skipped_row(error) for error in skipped]
        self.failed: list[dict[str, Any]] = []

    def add(
        self, record: Conversation | RecordError, result: ThreadResult | None
    ) -> list[dict[str, Any]]:
        """Take one conversation's row; return it as its ``conversations.jsonl`` line."""
        usable = usable_result(record, result, skipped=self.skipped, failed=self.failed)
        if usable is None:
            return []
        row = usable[2]
        self.rows.append(row)
        return [row]

    def judges_used(self, defaults: Mapping[str, Any]) -> dict[str, Any]:
        """The judges the rows name (stored outputs may name others than the defaults)."""

        def used(key: str) -> list[str]:
            return sorted({str(r[key]) for r in self.rows if r.get(key)})

        return {
            "shift_detection": used("shift_judge") or [defaults["shift_detection"]],
            "nl_assertion": used("nl_judge") or [defaults["nl_assertion"]],
            "reuse_judgments": defaults["reuse_judgments"],
        }

    def summary(self, *, compat: Compat, judges: Mapping[str, Any]) -> dict[str, Any]:
        """The figures of summary.json (the caller adds run details)."""
        rows = self.rows
        return goal_shift_summary(rows, compat=compat) | {
            "compat": compat,
            "counts": {
                "conversations": len(rows),
                "skipped_records": len(self.skipped),
                "failed_conversations": len(self.failed),
                "conversations_with_issues": sum(1 for r in rows if r.get("issues")),
                "conversations_shifts_not_judged": sum(
                    1 for r in rows if r.get("shifts_judged") is False
                ),
            },
            "judges": self.judges_used(judges),
            "skipped": self.skipped,
            "failed": self.failed,
            "issues": [issue for row in rows for issue in row.get("issues") or []],
        }
