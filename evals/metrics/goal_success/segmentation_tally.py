"""Goal segmentation alone over a corpus (``todeval goal-success --segmentation-only``).

:class:`SegmentationTally` turns each dialogue's segmentation into its ``segments.jsonl`` line
and, at the end, the figures of ``summary.json``.
"""

from __future__ import annotations

from typing import Any

from todeval.evals.metrics.goal_success.segmentation import segmentation_report
from todeval.evals.results import SegmentLine, ThreadResult, usable_result
from todeval.evals.schema import Dialogue, RecordError


class SegmentationTally:
    """Goal segmentation over a corpus: counts, skipped records, gold/predicted label pairs."""

    def __init__(self) -> None:
        self.dialogues = self.turns = self.goals = self.new_goals = self.resumed = 0
        self.skipped: list[dict[str, Any]] = []
        self.failed: list[dict[str, Any]] = []
        self.pairs: list[tuple[list[bool], list[bool]]] = []
        self.unlabelled = 0

    def add(
        self, record: Dialogue | RecordError, result: ThreadResult | None
    ) -> list[dict[str, Any]]:
        """Take one dialogue's segmentation; return its ``segments.jsonl`` line (or none)."""
        usable = usable_result(record, result, skipped=self.skipped, failed=self.failed)
        if usable is None:
            return []
        dialogue, thread, output = usable
        labels = [turn["is_new_goal"] for turn in output["turns"]]
        self.dialogues += 1
        self.turns += len(labels)
        self.goals += len(output["goals"])
        self.new_goals += sum(bool(label) for label in labels[1:])
        self.resumed += int(thread.resumed)
        gold = dialogue.gold_new_goal_labels()
        if None in labels:
            self.unlabelled += 1
        elif gold is not None:
            self.pairs.append((gold, [bool(label) for label in labels]))
        line = SegmentLine.model_validate(
            {
                "dialogue_id": output["dialogue_id"],
                "turns": [
                    {"turn_number": t["turn_number"], "is_new_goal": t["is_new_goal"]}
                    for t in output["turns"]
                ],
                "goals": output["goals"],
                "judge": output["judge"],
                **({"reason": output["reason"]} if output.get("reason") else {}),
            }
        )
        return [line.row()]

    def _no_metrics_note(self) -> str:
        if self.unlabelled:
            return (
                f"segmentation left turns unlabelled in {self.unlabelled} dialogues (the "
                "judge failed; see their reasons in segments.jsonl), so no figure against gold"
                " was computed for them"
                + ("" if self.dialogues > self.unlabelled else ", and no other dialogue remains")
            )
        return "no gold is_new_goal labels in the input"

    def summary(self, judge: str) -> dict[str, Any]:
        """The figures of summary.json (the caller adds run details)."""
        later_turns = self.turns - self.dialogues
        metrics: dict[str, Any] | None = segmentation_report(self.pairs) if self.pairs else None
        return {
            "judge": judge,
            "counts": {
                "dialogues": self.dialogues,
                "turns": self.turns,
                "goals": self.goals,
                "new_goal_share": round(self.new_goals / later_turns, 4) if later_turns else None,
                "resumed_from_checkpoint": self.resumed,
                "skipped_records": len(self.skipped),
                "failed_dialogues": len(self.failed),
                "dialogues_with_unlabelled_turns": self.unlabelled,
            },
            "metrics": metrics,
            "metrics_note": None if metrics else self._no_metrics_note(),
            "skipped": self.skipped,
            "failed": self.failed,
        }
