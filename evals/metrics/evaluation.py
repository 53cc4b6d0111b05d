"""What ``todeval evaluate`` gathers while results stream in: each record's line and the pools.

Each subsystem's part is its :class:`~evals.metrics.suite_tally.SuiteTally`, so a suite's
section reads exactly like its own command's summary. Parts are summed as records come and
only the failed and paused ids are listed, up to a cap, so memory does not grow with the run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from todeval.evals.metrics.record_metrics import CorpusParts, record_parts
from todeval.evals.metrics.running import LISTED, Capped, Packed, pack
from todeval.evals.metrics.suite_tally import SuiteTally
from todeval.evals.record_views import EvaluationRecord
from todeval.evals.results import EvaluationLine, ThreadResult, skipped_row
from todeval.evals.schema import Dialogue, RecordError

REPORT_RECORDS = 300
"""Records the report lists with their drill-down (all of them are in results.jsonl)."""

DRILLDOWN_TURN_FIELDS = ("turn_number", "user_msg", "response")
"""What the records' drill-down shows of a turn (:mod:`evals.report.evaluation`): not its
metadata, which is most of an SGD turn (SGD dev's 300 shown dialogues pack in a third of the
CPU and half the bytes)."""


SETTLED_FIELDS = frozenset(
    name
    for name, info in EvaluationLine.model_fields.items()
    if info.annotation == (dict[str, Any] | None)
)
"""The line's suite fields (``dict[str, Any]``, dumped value by value as ``Any``): a suite's part
already in that form goes in as it is (a suite tally's optional ``settled``, see
:class:`~evals.metrics.suite_tally.SuiteTally`)."""


@dataclass
class EvaluationTally:
    """Every suite's tally for one run (``suites`` in report order, ``judges`` as reported)."""

    judges: Mapping[str, Mapping[str, Any]]
    suites: Mapping[str, SuiteTally] = field(default_factory=dict)
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
    """The first records' ``results.jsonl`` lines (packed), for the report's drill-down."""
    shown_dialogues: dict[str, bytes] = field(default_factory=dict)
    """Their dialogue views by record id (packed: the report unpacks one at a time)."""
    skipped: list[dict[str, Any]] = field(default_factory=list)

    def add(
        self, record: EvaluationRecord | RecordError, result: ThreadResult | None
    ) -> list[dict[str, Any]]:
        """Take one record's result; return its ``results.jsonl`` line (none if unreadable)."""
        if isinstance(record, RecordError):
            self.skipped.append(skipped_row(record))
            return []
        assert result is not None  # the runner pairs every record with its thread's result
        for tally in self.suites.values():
            tally.see(record)
        line = self.line_for(record, result)
        self._count(line)
        if len(self.shown) < REPORT_RECORDS:
            self.shown.append(line)
            self.shown_dialogues[record.record_id] = pack(drilldown_dialogue(record.dialogue))
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
        """What ``summary.json`` says of the records: corpus metrics, failed, paused, skipped."""
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
        settled: dict[str, dict[str, Any]] = {}
        if not result.paused:
            for suite, suite_output in suites.items():
                self.ran.add(suite)
                one = ThreadResult(
                    record.record_id, result.thread_id, suite_output, None, result.resumed
                )
                tally = self.suites[suite]
                lines[suite] = part = tally.add(record, one)
                is_settled = getattr(tally, "settled", None)
                if suite in SETTLED_FIELDS and is_settled is not None and is_settled(part):
                    settled[suite] = part
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
            **{suite: part for suite, part in lines.items() if suite not in settled},
        )
        return line.row(settled)

    def records_in(self, suite: str) -> int:
        """How many records the suite has scored so far."""
        tally = self.suites.get(suite)
        return tally.count if tally is not None else 0

    def summaries(self) -> dict[str, dict[str, Any]]:
        """Each suite that ran: its command's summary figures, in report order."""
        return {
            suite: tally.summary(self.judges[suite])
            for suite, tally in self.suites.items()
            if suite in self.ran
        }


def drilldown_dialogue(dialogue: Dialogue) -> dict[str, Any]:
    """The dialogue as the records' drill-down reads it: its id and each turn's text."""
    fields = set(DRILLDOWN_TURN_FIELDS)
    return {
        "dialogue_id": dialogue.dialogue_id,
        "turns": [turn.model_dump(mode="json", include=fields) for turn in dialogue.turns],
    }
