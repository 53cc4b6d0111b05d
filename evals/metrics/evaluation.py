"""What ``todeval evaluate`` gathers per suite while results stream in: lines, summaries, sections.

Each suite's tally is the one its own command uses (:class:`GoalSuccessTally`, the tracker's
:class:`TrackedCorpusTally`, the memory :func:`item_line`, the goal-shift rows), so a suite's
section of the evaluation reads exactly like that command's summary. :meth:`EvaluationTally.add`
turns one record's evaluation-graph output into its ``results.jsonl`` line
(:class:`~evals.results.EvaluationLine`), with the record's share of every corpus figure under
``metrics`` (:mod:`evals.metrics.record_metrics`). The parts are summed as records come, and
only the failed and paused records' ids are listed, up to a cap (:meth:`record_figures`), so
the run's memory does not grow with its records.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from todeval.evals.memory_schema import MemoryEvalRecord
from todeval.evals.metrics.goal_shift.summary import goal_shift_summary
from todeval.evals.metrics.goal_success.tally import GoalSuccessTally
from todeval.evals.metrics.goal_tracking.tally import REPORT_TIMELINES, TrackedCorpusTally
from todeval.evals.metrics.memory.scores import memory_summary
from todeval.evals.metrics.memory.tally import Units, item_line
from todeval.evals.metrics.record_metrics import (
    PROACTIVE_SCORES,
    CorpusParts,
    proactive_verdict,
    record_parts,
)
from todeval.evals.metrics.running import LISTED, Capped, Packed
from todeval.evals.record_views import EvaluationRecord, atod_view
from todeval.evals.report.evaluation import proactive_section
from todeval.evals.report.goal_shift import goal_shift_section
from todeval.evals.report.goal_success import goal_success_section
from todeval.evals.report.goal_tracking import goal_tracking_section
from todeval.evals.report.memory import memory_section
from todeval.evals.report.page import Section
from todeval.evals.results import EvaluationLine, ThreadResult, skipped_row
from todeval.evals.schema import RecordError

REPORT_RECORDS = 300
"""Records the report lists with their drill-down (all of them are in results.jsonl)."""

Drilldown = tuple[dict[str, Any], dict[str, Any]]
"""A record's results.jsonl line and its dialogue view, as the report shows them."""


@dataclass
class EvaluationTally:
    """Every suite's tally for one run.

    Args:
        judges: Each suite's judge specs, as its summary reports them.
        units: An individual's stored memory units (the memory suite's bank).
    """

    judges: Mapping[str, Mapping[str, Any]]
    units: Units
    goal_success: GoalSuccessTally = field(default_factory=GoalSuccessTally)
    goal_tracking: TrackedCorpusTally = field(default_factory=TrackedCorpusTally)
    shift_rows: list[dict[str, Any]] = field(default_factory=list)
    memory_lines: list[dict[str, Any]] = field(default_factory=list)
    proactive_lines: list[dict[str, Any]] = field(default_factory=list)
    ran: set[str] = field(default_factory=set)
    keep_lines: bool = False
    """Also keep every record's compact line in ``lines`` (a list that grows with the corpus;
    the tests' reference); :meth:`record_figures` gives the figures from running sums."""
    lines: list[dict[str, Any]] = field(default_factory=list)
    """Every record's status and metrics, when ``keep_lines``."""
    records: int = 0
    """Readable records taken (every one has a line in ``results.jsonl``)."""
    parts: CorpusParts = field(default_factory=CorpusParts)
    """Every record's metric parts, summed (what the corpus figures pool)."""
    failed: Capped[dict[str, Any]] = field(default_factory=lambda: Capped(LISTED))
    """Records whose thread failed: ``{"record_id", "error"}``."""
    paused: Capped[str] = field(default_factory=lambda: Capped(LISTED))
    """Ids of records whose thread is paused for a human."""
    shown: Packed = field(default_factory=Packed)
    """The first records in full (:data:`Drilldown` pairs, packed), for the report's drill-down."""
    skipped: list[dict[str, Any]] = field(default_factory=list)
    transcript_issues: list[dict[str, Any]] = field(default_factory=list)
    """Every transcript's issues (unknown tools, orphan results, bad arguments, ...), whether
    or not its goal-shift metrics ran."""

    def add(
        self, record: EvaluationRecord | RecordError, result: ThreadResult | None
    ) -> list[dict[str, Any]]:
        """Take one record's result; return its ``results.jsonl`` line (none if unreadable)."""
        if isinstance(record, RecordError):
            self.skipped.append(skipped_row(record))
            return []
        assert result is not None  # the runner pairs every record with its thread's result
        if record.conversation is not None:
            self.transcript_issues.extend(i.model_dump() for i in record.conversation.issues)
        line = self.line_for(record, result)
        self._count(line)
        if len(self.shown) < REPORT_RECORDS:
            self.shown.append((line, record.dialogue.model_dump(mode="json")))
        return [line]

    def _count(self, line: Mapping[str, Any]) -> None:
        """Pool one record's line into the run's counts (and ``lines``, if kept)."""
        self.records += 1
        self.parts.add(line["metrics"])
        if line["error"]:
            self.failed.append({"record_id": line["record_id"], "error": line["error"]})
        if line["status"] == "paused":
            self.paused.append(line["record_id"])
        if self.keep_lines:
            self.lines.append({k: line[k] for k in ("record_id", "status", "error", "metrics")})

    def record_figures(self) -> dict[str, Any]:
        """What ``summary.json`` says of the records as such.

        Returns:
            ``metrics`` (every figure's corpus value: :func:`~evals.metrics.record_metrics.
            corpus_values` over the records' parts), ``records``, ``failed`` (the first
            :data:`~evals.metrics.running.LISTED` ``{"record_id", "error"}``) and
            ``failed_records``, ``paused`` (the first ids) and ``paused_records``,
            ``skipped`` (the rows of unreadable records) and ``skipped_records``.
        """
        return {
            "metrics": self.parts.values(),
            "records": self.records,
            "failed": self.failed.items,
            "failed_records": self.failed.total,
            "paused": self.paused.items,
            "paused_records": self.paused.total,
            "skipped": self.skipped,
            "skipped_records": len(self.skipped),
        }

    def line_for(self, record: EvaluationRecord, result: ThreadResult) -> dict[str, Any]:
        """One record's ``results.jsonl`` line (its suites' lines and ``metrics``)."""
        output = result.output or {}
        suites: Mapping[str, Any] = output.get("results") or {}
        lines: dict[str, Any] = {}
        if not result.paused:
            for suite, suite_output in suites.items():
                self.ran.add(suite)
                one = ThreadResult(
                    record.record_id, result.thread_id, suite_output, None, result.resumed
                )
                lines[suite] = self._add_suite(suite, record, one)
        line = EvaluationLine(
            record_id=record.record_id,
            kind=record.kind,
            suites=list(output.get("suites") or []),
            thread_id=result.thread_id,
            resumed=result.resumed,
            status=result.status,
            error=result.error,
            interrupts=result.interrupts if result.paused else None,
            metrics=record_parts(lines),
            **lines,
        )
        return line.row()

    def _add_suite(self, suite: str, record: EvaluationRecord, result: ThreadResult) -> Any:
        if suite == "goal_success":
            goals = self.goal_success.add(record.dialogue, result)
            segmentation = (result.output or {}).get("segmentation") or {}
            if not goals and segmentation.get("reason"):  # no goals: say why, in the line
                return {"goals": goals, "unsegmented_reason": segmentation["reason"]}
            return {"goals": goals}
        if suite == "goal_tracking":
            scored = self.goal_tracking.judged(record.atod or atod_view(record.dialogue), result)
            line, row = self.goal_tracking.add_scored(scored)
            return line | {"figures": row}
        if suite == "goal_shift":
            row = dict(result.output or {})
            self.shift_rows.append(row)
            return row
        if suite == "memory":
            assert record.memory is not None  # the graph runs memory only for memory items
            memory = record.memory
            eval_record = MemoryEvalRecord(
                eval_id=memory.item.eval_id, individual_id=memory.individual_id, item=memory.item
            )
            item = item_line(eval_record, result, self.units(memory.individual_id))
            self.memory_lines.append(item)
            return item
        if suite == "proactive":
            verdicts = dict(result.output or {})
            self.proactive_lines.append(verdicts | {"record_id": record.record_id})
            return verdicts
        raise ValueError(f"unknown suite {suite!r}")

    def records_in(self, suite: str) -> int:
        """How many records the suite has scored so far."""
        scored = {
            "goal_success": self.goal_success.dialogues,
            "goal_tracking": self.goal_tracking.figures.n_dialogues,
            "goal_shift": len(self.shift_rows),
            "memory": len(self.memory_lines),
            "proactive": len(self.proactive_lines),
        }
        return scored.get(suite, 0)

    def summaries(self) -> dict[str, dict[str, Any]]:
        """Each suite that ran: its command's summary figures."""
        sections: dict[str, dict[str, Any]] = {}
        if "goal_success" in self.ran:
            sections["goal_success"] = self.goal_success.summary(self.judges["goal_success"])
        if "goal_tracking" in self.ran:
            summary = self.goal_tracking.summary(dict(self.judges["goal_tracking"]))
            sections["goal_tracking"] = summary | {
                "counts": {
                    "dialogues": summary["n_dialogues"],
                    "goals": summary["n_pred_goals"],
                    "skipped_records": 0,
                    "failed_dialogues": 0,
                }
            }
            for key in ("skipped", "failed"):
                sections["goal_tracking"].pop(key, None)
        if "goal_shift" in self.ran:
            with_issues = {issue["dialogue_id"] for issue in self.transcript_issues}
            sections["goal_shift"] = goal_shift_summary(self.shift_rows) | {
                "counts": {
                    "conversations": len(self.shift_rows),
                    "conversations_with_issues": len(with_issues),
                },
                "judges": dict(self.judges["goal_shift"]),
                "issues": self.transcript_issues,
            }
        if "memory" in self.ran:
            sections["memory"] = memory_summary(self.memory_lines) | {
                "judges": dict(self.judges["memory"])
            }
        if "proactive" in self.ran:
            sections["proactive"] = proactive_summary(self.proactive_lines) | {
                "judges": dict(self.judges["proactive"])
            }
        return sections

    def sections(self, summaries: Mapping[str, Mapping[str, Any]]) -> list[Section]:
        """The report's subsystem sections, in suite order."""
        built = []
        if "goal_success" in summaries:
            tally = self.goal_success
            built.append(goal_success_section(summaries["goal_success"], *tally.report_view()))
        if "goal_tracking" in summaries:
            built.append(
                goal_tracking_section(
                    summaries["goal_tracking"],
                    self.goal_tracking.shown,
                    max_timelines=REPORT_TIMELINES,
                )
            )
        if "goal_shift" in summaries:
            built.append(goal_shift_section(summaries["goal_shift"], self.shift_rows))
        if "memory" in summaries:
            built.append(memory_section(summaries["memory"], self.memory_lines))
        if "proactive" in summaries:
            built.append(proactive_section(summaries["proactive"], self.proactive_lines))
        return built


def proactive_summary(lines: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Each ProactiveEval figure: the mean 1-10 score over the records its judge scored.

    A record whose judge abstained counts in ``abstained`` with the judge's reason; a figure
    every judge abstained on is None with those reasons (never a made-up score).
    """
    figures: dict[str, dict[str, Any]] = {}
    for figure, (_, _, score) in PROACTIVE_SCORES.items():
        verdicts = [v for line in lines if (v := proactive_verdict(line, figure)) is not None]
        if not verdicts:
            continue  # no record gave this task's output
        scores = [float(v[score]) for v in verdicts if v.get(score) is not None]
        reasons = sorted(
            {
                str(v.get("basis") or v.get("overall_basis"))
                for v in verdicts
                if v.get(score) is None
            }
        )
        figures[figure] = {
            "value": sum(scores) / len(scores) if scores else None,
            "scored": len(scores),
            "abstained": len(verdicts) - len(scores),
            "reason": None if scores else "; ".join(reasons) or "the judge gave no score",
            "abstain_reasons": reasons,
            "judges": sorted({str(v.get("judge")) for v in verdicts}),
        }
    densities = [
        line["guidance"]["density"] for line in lines if (line.get("guidance") or {}).get("density")
    ]
    return {
        "figures": figures,
        "target_density": _mean(d.get("target_density") for d in densities),
        "initiation_density": _mean(d.get("initiation_density") for d in densities),
        "counts": {
            "records": len(lines),
            "plans": sum(line.get("plan") is not None for line in lines),
            "dialogues": sum(line.get("guidance") is not None for line in lines),
        },
    }


def _mean(values: Iterable[Any]) -> float | None:
    numbers = [float(v) for v in values if v is not None]
    return sum(numbers) / len(numbers) if numbers else None
