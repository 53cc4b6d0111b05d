"""Goal success over a corpus, as results stream in: goal lines, counts, agreement inputs.

:class:`GoalSuccessTally` turns each dialogue's output into its ``goals.jsonl`` lines and the
figures of ``summary.json``; :class:`SegmentationTally` does the same for segmentation alone.
Goals and turns become counts as they come (issue 22); only the failed goals the report shows
are kept, up to :data:`REPORT_FAILED_GOALS`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from todeval.evals.metrics.goal_success.calibration import CalibrationCounts
from todeval.evals.metrics.goal_success.corpus_rates import GoalCounts, TurnCounts
from todeval.evals.metrics.goal_success.segmentation_tally import (
    SegmentationTally as SegmentationTally,
)
from todeval.evals.metrics.goal_success.success_rate import score_goals, undecided_reason
from todeval.evals.metrics.goal_success.teacher_agreement import (
    LabellerCounts,
    PanelCounts,
    ReferenceCounts,
)
from todeval.evals.metrics.running import LISTED, Capped, Packed, PackedMap, pack
from todeval.evals.results import GoalLine, ThreadResult, usable_result
from todeval.evals.schema import Dialogue, RecordError, Turn

if TYPE_CHECKING:  # the audits' key only: they are read in evals.datasets
    from todeval.evals.datasets.verdicts import AuditKey

TURN_EXTRAS = ("human", "lone_label", "undecided_reason", "certain_evidence", "tool_evidence")
"""What a voted turn may carry besides its labels: the human verdict, why it is undecided."""

REPORT_FAILED_GOALS = 500
"""Failed goals (with their dialogues) the HTML report shows in full."""


class GoalSuccessTally:
    """Accumulates one run's results; :meth:`summary` turns them into summary.json.

    Args:
        audits: Human verdicts on turns the vote decided (``todeval review --audit``): they
            measure the vote against humans, as paper 004's Appendix C does.
        keep_turns: Also keep every voted turn with its verdicts (grows with the corpus; the
            tests' reference); the calibration figures come from counts anyway.
    """

    def __init__(
        self, audits: Mapping[AuditKey, dict[str, Any]] | None = None, *, keep_turns: bool = False
    ) -> None:
        self.audits = dict(audits or {})
        self.keep_turns = keep_turns
        self.dialogues = self.resumed = 0
        self.goal_counts = GoalCounts()
        self.turn_counts = TurnCounts()
        self.panel = PanelCounts()
        self.gold = ReferenceCounts()
        self.human_counts = ReferenceCounts()
        self.vote_audited = LabellerCounts()
        """The vote against audit verdicts only (escalated turns had no winning vote)."""
        self.audited_turns = 0
        self.calibration_counts = CalibrationCounts()
        self.turns: list[dict[str, Any]] = []
        self.human: list[dict[str, Any] | None] = []
        self.audited: list[dict[str, Any] | None] = []
        self.skipped: Capped[dict[str, Any]] = Capped(LISTED)
        self.failed: Capped[dict[str, Any]] = Capped(LISTED)
        self.pending: list[dict[str, Any]] = []
        """Every paused thread with its turns awaiting a verdict: ``todeval review``'s work list."""
        self.unsegmented: Capped[dict[str, Any]] = Capped(LISTED)
        """Dialogues whose goals are unknown (a boundary nobody could label), with why."""
        self.report_goals = Packed()
        """The first :data:`REPORT_FAILED_GOALS` failed goals, in full, for the report."""
        self.report_dialogues: dict[str, bytes] = {}
        """Their dialogues' drill-down views by id, packed."""

    @property
    def n_goals(self) -> int:
        """Goals scored so far."""
        return self.goal_counts.every.n

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
            self._add_turn(record.dialogue_id, turn, gold)
        lines = [_goal_line(record.dialogue_id, goal) for goal in goals]
        for line in lines:
            self.goal_counts.add(line)
            if line["success"] is False:
                self._keep_for_report(line, record)
        return lines

    def _add_turn(self, dialogue_id: str, voted: dict[str, Any], gold: Turn) -> None:
        """Count one voted turn against its gold label, human verdict and audit."""
        turn = _compact(voted)
        has_gold = gold.quality is not None
        reference = {"quality": gold.quality, "rcof": gold.rcof} if has_gold else None
        audit = self.audits.get((dialogue_id, turn["turn_number"]))
        human = voted.get("human") or audit
        verdict = {"quality": human["quality"], "rcof": human["rcof"]} if human else None
        audited = verdict if audit else None
        self.turn_counts.add(turn)
        self.panel.add(turn)
        self.gold.add(turn, reference)
        self.human_counts.add(turn, verdict)
        self.vote_audited.add(turn, audited)
        self.audited_turns += audited is not None
        # a turn people decided after an escalation counts as escalated, even if also audited
        escalated = audited is None or turn.get("decided_by") == "human"
        self.calibration_counts.add(turn, verdict, not escalated)
        if self.keep_turns:
            self.turns.append(turn)
            self.human.append(verdict)
            self.audited.append(audited)

    def merge(self, other: GoalSuccessTally) -> None:
        """Add what ``other`` tallied (a disjoint part of the corpus, which came later)."""
        self.dialogues += other.dialogues
        self.resumed += other.resumed
        self.goal_counts.merge(other.goal_counts)
        self.turn_counts.merge(other.turn_counts)
        self.panel.merge(other.panel)
        self.gold.merge(other.gold)
        self.human_counts.merge(other.human_counts)
        self.vote_audited.merge(other.vote_audited)
        self.calibration_counts.merge(other.calibration_counts)
        self.skipped.merge(other.skipped)
        self.failed.merge(other.failed)
        self.unsegmented.merge(other.unsegmented)
        self.audited_turns += other.audited_turns
        self.pending += other.pending
        if self.keep_turns:
            self.turns += other.turns
            self.human += other.human
            self.audited += other.audited
        self.report_goals.take(other.report_goals, REPORT_FAILED_GOALS - len(self.report_goals))
        shown = {str(line["dialogue_id"]) for line in self.report_goals}
        self.report_dialogues |= {
            did: dialogue for did, dialogue in other.report_dialogues.items() if did in shown
        }

    def _keep_for_report(self, line: dict[str, Any], record: Dialogue) -> None:
        if len(self.report_goals) >= REPORT_FAILED_GOALS:  # counted, not shown
            return
        self.report_goals.append(line)
        if record.dialogue_id not in self.report_dialogues:  # one view however many goals failed
            self.report_dialogues[record.dialogue_id] = pack(_drilldown_view(record))

    def report_view(self) -> tuple[Sequence[dict[str, Any]], Mapping[str, dict[str, Any]]]:
        """The failed goals the report shows, and their dialogues' drill-down views by id.

        Both stay packed until the report reads each goal and view (one at a time): unpacked
        together, SGD dev's 500 goals set the run's peak memory (4 MB above its last record).
        """
        return self.report_goals, PackedMap(self.report_dialogues)

    def calibration(self) -> dict[str, Any] | None:
        """Each teacher's agreement with this run's human verdicts (``teacher_calibration``)."""
        return self.calibration_counts.calibration()

    def applied_calibration(self, prior: Mapping[str, Any], source: str) -> dict[str, Any]:
        """An earlier calibration applied to this run's turns (``applied_calibration``)."""
        return self.calibration_counts.applied(prior, source)

    def _human_agreement(self) -> dict[str, Any]:
        """Each teacher against every human verdict; the vote against audit verdicts only."""
        agreement = self.human_counts.report()
        audited = self.audited_turns > 0
        agreement["vote"] = self.vote_audited.report() if audited else None
        agreement["audited_turns"] = self.audited_turns
        agreement["note"] = (
            "teachers: against every human verdict; vote: only against audit verdicts "
            "(todeval review --audit N), since escalated turns had no winning vote"
        )
        return agreement

    def summary(self, judges: Mapping[str, Any]) -> dict[str, Any]:
        """The figures of summary.json (the caller adds run details).

        Args:
            judges: Who judged: ``{"segmentation": spec, "turn_quality": [specs]}``.
        """
        human_verdicts = self.human_counts.n_turns
        return {
            **self.goal_counts.report(),
            **self.turn_counts.report(),
            "pending_review": sum(len(thread["turns"]) for thread in self.pending),
            "human_verdicts": human_verdicts,
            "teacher_kappa": self.panel.report(),
            "gold_agreement": self.gold.report() if self.gold.n_turns else None,
            "human_agreement": self._human_agreement() if human_verdicts else None,
            "judges": dict(judges),
            "counts": {
                "dialogues": self.dialogues,
                "turns": self.turn_counts.n,
                "goals": self.n_goals,
                "resumed_from_checkpoint": self.resumed,
                "skipped_records": self.skipped.total,
                "failed_dialogues": self.failed.total,
                "pending_review_dialogues": len(self.pending),
                "unsegmented_dialogues": self.unsegmented.total,
            },
            "pending_review_threads": self.pending,
            "unsegmented": self.unsegmented.items,
            "skipped": self.skipped.items,
            "failed": self.failed.items,
        }


DRILLDOWN_FIELDS = ("turn_number", "user_msg", "response", "source_names", "source_snippets")
"""What the report's drill-down shows of a turn (not its metadata: SGD frames are most of it)."""


def _drilldown_view(record: Dialogue) -> dict[str, Any]:
    return {
        "dialogue_id": record.dialogue_id,
        "turns": [
            turn.model_dump(mode="json", include=set(DRILLDOWN_FIELDS)) for turn in record.turns
        ],
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
