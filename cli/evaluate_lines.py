"""What ``todeval evaluate`` gathers per suite while results stream in: lines, summaries, sections.

Each suite's tally is the one its own command uses (``todeval gsr``'s :class:`GsrTally`, the
tracker's :class:`GoalTrackingTally`, ``todeval memory eval``'s item lines, ``todeval
goal-shift``'s rows), so a suite's section of ``evaluate`` reads exactly like that command's
summary. :meth:`SuiteTallies.add` turns one record's evaluation-graph output into its
``results.jsonl`` line, with the record's share of every corpus figure under ``metrics``
(:mod:`evals.metrics.record_metrics`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cli.gsr_tally import GsrTally
from cli.memory_runs import MemoryEvalRecord, item_line
from cli.track_goals import REPORT_TIMELINES, goals_line, scored_result
from evals.metrics.goal_shift.summary import goal_shift_summary
from evals.metrics.goal_tracking.report import GoalTrackingTally
from evals.metrics.memory.scores import memory_summary
from evals.metrics.record_metrics import record_parts
from evals.record_views import EvaluationRecord, atod_view
from evals.report.goal_shift import goal_shift_section
from evals.report.goal_success import goal_success_section
from evals.report.goal_tracking import goal_tracking_section
from evals.report.memory import memory_section
from evals.report.page import Section
from graphs.runner import ThreadResult
from nodes.context import Context
from nodes.memory.memory_active import bank_for


@dataclass
class SuiteTallies:
    """Every suite's tally for one run.

    Args:
        context: The run's judges and thresholds (the memory suite reads its bank).
    """

    context: Context
    gsr: GsrTally = field(default_factory=GsrTally)
    goals: GoalTrackingTally = field(default_factory=GoalTrackingTally)
    goal_lines: list[dict[str, Any]] = field(default_factory=list)
    """The first goal-tracking lines, drawn as timelines in the report."""
    shift_rows: list[dict[str, Any]] = field(default_factory=list)
    memory_lines: list[dict[str, Any]] = field(default_factory=list)
    ran: set[str] = field(default_factory=set)

    def add(self, record: EvaluationRecord, result: ThreadResult) -> dict[str, Any]:
        """One record's ``results.jsonl`` line (its suites' lines and ``metrics``)."""
        output = result.output or {}
        line: dict[str, Any] = {
            "record_id": record.record_id,
            "kind": record.kind,
            "suites": list(output.get("suites") or []),
            "thread_id": result.thread_id,
            "resumed": result.resumed,
            "status": "failed" if result.error else "paused" if result.paused else "done",
            "error": result.error,
        }
        if result.paused:
            line["interrupts"] = result.interrupts
        suites: Mapping[str, Any] = output.get("results") or {}
        if not result.paused:
            for suite, suite_output in suites.items():
                self.ran.add(suite)
                one = ThreadResult(
                    record.record_id, result.thread_id, suite_output, None, result.resumed
                )
                line[suite] = self._add_suite(suite, record, one)
        line["metrics"] = record_parts({s: line[s] for s in suites if s in line})
        return line

    def _add_suite(self, suite: str, record: EvaluationRecord, result: ThreadResult) -> Any:
        if suite == "gsr":
            return {"goals": self.gsr.add(record.dialogue, result)}
        if suite == "goals":
            scored = scored_result(record.atod or atod_view(record.dialogue), result)
            tracked = goals_line(scored) | {"figures": self.goals.add(scored)}
            if len(self.goal_lines) <= REPORT_TIMELINES:  # one more than drawn: "more" shows
                self.goal_lines.append(tracked)
            return tracked
        if suite == "shift":
            row = dict(result.output or {})
            self.shift_rows.append(row)
            return row
        if suite == "memory":
            assert record.memory is not None  # the graph runs memory only for memory items
            memory = record.memory
            eval_record = MemoryEvalRecord(
                eval_id=memory.item.eval_id, individual_id=memory.individual_id, item=memory.item
            )
            units = bank_for(self.context).units(memory.individual_id)
            item = item_line(eval_record, result, units)
            self.memory_lines.append(item)
            return item
        raise ValueError(f"unknown suite {suite!r}")

    def records_in(self, suite: str) -> int:
        """How many records the suite has scored so far."""
        scored = {
            "gsr": self.gsr.dialogues,
            "goals": len(self.goals.rows),
            "shift": len(self.shift_rows),
            "memory": len(self.memory_lines),
        }
        return scored.get(suite, 0)

    def summaries(self) -> dict[str, dict[str, Any]]:
        """Each suite that ran: its command's summary figures."""
        sections: dict[str, dict[str, Any]] = {}
        if "gsr" in self.ran:
            sections["gsr"] = self.gsr.summary(self.context)
        if "goals" in self.ran:
            report = self.goals.report()
            report.pop("dialogues", None)  # per-dialogue rows are in results.jsonl
            sections["goals"] = report | {
                "counts": {
                    "dialogues": report["n_dialogues"],
                    "goals": report["n_pred_goals"],
                    "skipped_records": 0,
                    "failed_dialogues": 0,
                },
                "judges": {"goal_extraction": self.context.goal_extraction_judge},
            }
        if "shift" in self.ran:
            sections["shift"] = goal_shift_summary(self.shift_rows) | {
                "counts": {"conversations": len(self.shift_rows)},
                "judges": {
                    "shift_detection": self.context.shift_detection_judge,
                    "nl_assertion": self.context.nl_assertion_judge,
                },
            }
        if "memory" in self.ran:
            sections["memory"] = memory_summary(self.memory_lines) | {
                "judges": {
                    "retrieval": self.context.memory_retrieval,
                    "judger": self.context.memory_judger,
                    "reader": self.context.reader_judge,
                    "repair_agent": self.context.repair_agent,
                    "user_simulator": self.context.user_simulator,
                }
            }
        return sections

    def sections(self, summaries: Mapping[str, Mapping[str, Any]]) -> list[Section]:
        """The report's subsystem sections, in suite order."""
        built = []
        if "gsr" in summaries:
            built.append(
                goal_success_section(
                    summaries["gsr"], self.gsr.report_goals, self.gsr.report_dialogues
                )
            )
        if "goals" in summaries:
            built.append(
                goal_tracking_section(
                    summaries["goals"], self.goal_lines, max_timelines=REPORT_TIMELINES
                )
            )
        if "shift" in summaries:
            built.append(goal_shift_section(summaries["shift"], self.shift_rows))
        if "memory" in summaries:
            built.append(memory_section(summaries["memory"], self.memory_lines))
        return built
