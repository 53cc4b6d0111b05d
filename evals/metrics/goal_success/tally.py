"""Goal success over a corpus, as results stream in: goal lines, counts, agreement inputs.

:class:`GoalSuccessTally` turns each dialogue's goal-success output into its ``goals.jsonl``
lines and, at the end, the figures of ``summary.json``; :class:`SegmentationTally` does the
same for goal segmentation alone (``segments.jsonl``). Memory stays small per turn (labels
without rationales); full goals and dialogue texts are kept only for the failed goals the
report shows.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evals.metrics.goal_success.segmentation import segmentation_report
from evals.metrics.goal_success.success_rate import (
    gsr_report,
    score_goals,
    turn_report,
    undecided_reason,
)
from evals.metrics.goal_success.teacher_agreement import (
    labeller_agreement,
    reference_agreement,
    teacher_agreement,
)
from evals.results import GoalLine, SegmentLine, ThreadResult, usable_result
from evals.schema import Dialogue, RecordError

TURN_EXTRAS = ("human", "lone_label", "undecided_reason", "certain_evidence")
"""What a voted turn may carry besides its labels: the human verdict, why it is undecided."""

REPORT_FAILED_GOALS = 500
"""Failed goals (with their dialogues) the HTML report shows in full."""


AuditKey = tuple[str, int]
"""(dialogue id, turn number) of an audited turn."""


def read_audits(path: Path) -> dict[AuditKey, dict[str, Any]]:
    """Audit verdicts from a run's ``verdicts.jsonl`` (the last one per turn wins)."""
    if not path.exists():
        return {}
    audits = {}
    for line in path.read_text().splitlines():
        entry = json.loads(line)
        if entry.get("audit"):
            audits[(entry["dialogue_id"], entry["turn_number"])] = entry["verdict"]
    return audits


class GoalSuccessTally:
    """Accumulates one run's results; :meth:`summary` turns them into summary.json.

    Args:
        audits: Human verdicts on turns the vote decided (``todeval review --audit``): they
            measure the vote against humans, as paper 004's Appendix C does.
    """

    def __init__(self, audits: Mapping[AuditKey, dict[str, Any]] | None = None) -> None:
        self.audits = dict(audits or {})
        self.audited: list[dict[str, Any] | None] = []
        self.dialogues = self.resumed = 0
        self.goals: list[dict[str, Any]] = []
        self.turns: list[dict[str, Any]] = []
        self.gold: list[dict[str, Any] | None] = []
        self.human: list[dict[str, Any] | None] = []
        self.skipped: list[dict[str, Any]] = []
        self.failed: list[dict[str, Any]] = []
        self.pending: list[dict[str, Any]] = []
        self.unsegmented: list[dict[str, Any]] = []
        """Dialogues whose goals are unknown (a boundary nobody could label), with why."""
        self.report_goals: list[dict[str, Any]] = []
        self.report_dialogues: dict[str, dict[str, Any]] = {}
        self._shown_in_full = 0

    @property
    def n_goals(self) -> int:
        """Goals scored so far."""
        return len(self.goals)

    def add(
        self, record: Dialogue | RecordError, result: ThreadResult | None
    ) -> list[dict[str, Any]]:
        """Take one record's result; return its goals.jsonl lines."""
        usable = usable_result(record, result, skipped=self.skipped, failed=self.failed)
        if usable is None:
            return []
        record, result, _ = usable
        turns, goals = _labels_and_goals(result)
        self.dialogues += 1
        segmentation = (result.output or {}).get("segmentation") or {}
        if not goals and segmentation.get("reason"):
            self.unsegmented.append(
                {"dialogue_id": record.dialogue_id, "reason": segmentation["reason"]}
            )
        self.resumed += int(result.resumed)
        if result.paused:
            self.pending.append(
                {
                    "dialogue_id": result.dialogue_id,
                    "thread_id": result.thread_id,
                    "turns": [t["turn_number"] for t in turns if _awaits_human(t)],
                }
            )
        for turn, gold in zip(turns, record.turns, strict=True):
            self.turns.append(_compact(turn))
            has_gold = gold.quality is not None
            self.gold.append({"quality": gold.quality, "rcof": gold.rcof} if has_gold else None)
            audit = self.audits.get((record.dialogue_id, turn["turn_number"]))
            human = turn.get("human") or audit
            verdict = {"quality": human["quality"], "rcof": human["rcof"]} if human else None
            self.human.append(verdict)
            self.audited.append(verdict if audit else None)
        lines = [_goal_line(record.dialogue_id, goal) for goal in goals]
        for line in lines:
            self.goals.append({k: v for k, v in line.items() if k != "turns"})
            if line["success"] is False:
                self._keep_for_report(line, record)
        return lines

    def _keep_for_report(self, line: dict[str, Any], record: Dialogue) -> None:
        if self._shown_in_full >= REPORT_FAILED_GOALS:  # counted, not shown
            self.report_goals.append({k: v for k, v in line.items() if k != "turns"})
            return
        self._shown_in_full += 1
        self.report_goals.append(line)
        self.report_dialogues[record.dialogue_id] = record.model_dump(mode="json")

    def _human_agreement(self) -> dict[str, Any]:
        """Each teacher against every human verdict; the vote against audit verdicts only."""
        agreement = reference_agreement(self.turns, self.human)
        audited = any(ref is not None for ref in self.audited)
        agreement["vote"] = labeller_agreement(self.turns, self.audited) if audited else None
        agreement["audited_turns"] = sum(ref is not None for ref in self.audited)
        agreement["note"] = (
            "teachers: against every human verdict; vote: only against audit verdicts "
            "(todeval review --audit N), since escalated turns had no winning vote"
        )
        return agreement

    def summary(self, judges: Mapping[str, Any]) -> dict[str, Any]:
        """The figures of summary.json (the caller adds run details).

        Args:
            judges: Who judged: ``{"segmenter": spec, "teachers": [specs]}``.
        """
        turn_figures = turn_report(self.turns)
        has_gold = any(ref is not None for ref in self.gold)
        has_human = any(ref is not None for ref in self.human)
        return {
            **gsr_report(self.goals),
            **turn_figures,
            "pending_review": sum(len(thread["turns"]) for thread in self.pending),
            "human_verdicts": sum(ref is not None for ref in self.human),
            "teacher_kappa": teacher_agreement(self.turns),
            "gold_agreement": reference_agreement(self.turns, self.gold) if has_gold else None,
            "human_agreement": self._human_agreement() if has_human else None,
            "judges": dict(judges),
            "counts": {
                "dialogues": self.dialogues,
                "turns": len(self.turns),
                "goals": len(self.goals),
                "resumed_from_checkpoint": self.resumed,
                "skipped_records": len(self.skipped),
                "failed_dialogues": len(self.failed),
                "pending_review_dialogues": len(self.pending),
                "unsegmented_dialogues": len(self.unsegmented),
            },
            "pending_review_threads": self.pending,
            "unsegmented": self.unsegmented,
            "skipped": self.skipped,
            "failed": self.failed,
        }


def _labels_and_goals(result: ThreadResult) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Voted turns and scored goals, from a finished thread or, provisionally, a paused one."""
    output = result.output
    assert output is not None
    if not result.paused:
        return output["turns"], output["goals"]
    # Paused inside teacher voting: the votes so far live in that subgraph's state.
    turns = output["subgraphs"]["teacher_voting"]["turns"]
    return turns, score_goals(output["segmentation"]["goals"], turns)


def _awaits_human(turn: dict[str, Any]) -> bool:
    return bool(turn["ambiguous"]) and turn.get("decided_by") != "human"


def _goal_line(dialogue_id: str, goal: dict[str, Any]) -> dict[str, Any]:
    return _goal_model(dialogue_id, goal).row()


def _goal_model(dialogue_id: str, goal: dict[str, Any]) -> GoalLine:
    turns = [
        {
            "turn_number": t["turn_number"],
            "quality": t["quality"],
            "rcof": t["rcof"],
            "ambiguous": t["ambiguous"],
            "decided_by": t["decided_by"],
            "teachers": t["teachers"],
            **{key: t[key] for key in TURN_EXTRAS if key in t},
        }
        for t in goal["turns"]
    ]
    return GoalLine(
        dialogue_id=dialogue_id,
        goal_index=goal["goal_index"],
        start_turn=goal["start_turn"],
        end_turn=goal["end_turn"],
        n_turns=goal["n_turns"],
        success=goal["success"],
        rcof=goal["rcof"],
        fractional_credit=goal["fractional_credit"],
        last_turn_success=goal["last_turn_success"],
        pending_review=any(_awaits_human(t) for t in goal["turns"]),
        undecided_reason=undecided_reason(goal),
        turns=turns,
    )


def _compact(turn: dict[str, Any]) -> dict[str, Any]:
    """A voted turn without rationales (what the agreement figures read)."""
    return {
        "turn_number": turn["turn_number"],
        "quality": turn["quality"],
        "rcof": turn["rcof"],
        "ambiguous": turn["ambiguous"],
        "decided_by": turn["decided_by"],
        "teachers": [
            {"judge": t["judge"], "quality": t["quality"], "rcof": t["rcof"]}
            for t in turn["teachers"]
        ],
    }


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
