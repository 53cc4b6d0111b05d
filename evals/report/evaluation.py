"""The top-level sections of the evaluation report: every figure, and each record's drill-down.

:func:`figures_section` comes first: every corpus figure of :mod:`evals.metrics.record_metrics`
by suite, with the run's counts and its skipped and failed records. :func:`records_section`
lists the records with their own figures; each opens (``<details>``, no script) onto its goals
as segmented and scored (Goal Success Rate), the goals the tracker held, and its turns with the
voted quality and root cause.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from evals.metrics.record_metrics import METRICS
from evals.report.page import (
    Section,
    anchor_id,
    fmt_num,
    fmt_pct,
    num_html,
    pct_html,
    shorten,
    skipped_records_html,
    table,
)
from evals.report.validity import validity_html, validity_warning_html

FIGURES_ID = "evaluation"
RECORDS_ID = "records"
#: Figures that are counts or turns, not fractions.
NOT_FRACTIONS = frozenset({"dte"})
#: Per-record figures shown as columns of the records table.
RECORD_COLUMNS = ("gsr", "goal_detection_f1", "status_accuracy", "tsr", "jga", "dte")

Row = Mapping[str, Any]


def _cell(name: str, value: Any) -> str:
    return num_html(value) if name in NOT_FRACTIONS else pct_html(value)


def figures_section(summary: Row) -> Section:
    """Every corpus figure in one table, with who decided it; then skipped and failed records."""
    values: Mapping[str, Any] = summary.get("metrics") or {}
    validity: Mapping[str, Any] = summary.get("validity") or {}
    rows = [
        [
            escape(info.suite),
            escape(info.label),
            _cell(name, values.get(name)),
            validity_html(validity.get(name)),
        ]
        for name, info in METRICS.items()
        if name in values
    ]
    counts = summary.get("counts") or {}
    cards = [
        ("records", str(counts.get("records", 0))),
        ("skipped", str(counts.get("skipped_records", 0))),
        ("failed", str(counts.get("failed_records", 0))),
        ("paused", str(counts.get("paused_records", 0))),
    ]
    by_suite = ", ".join(f"{s}: {n}" for s, n in (counts.get("by_suite") or {}).items())
    note = (
        f'<p class="note">Records per suite: {escape(by_suite)}. Each figure pools the records '
        "that have it (a ratio of sums), as each suite's section does; figures no record "
        "could have are left out.</p>"
    )
    failed = [{"dialogue_id": f.get("record_id"), "error": f.get("error")} for f in
              summary.get("failed") or []]  # fmt: skip
    body = (
        validity_warning_html(validity, values)
        + note
        + table(["suite", "figure", "value", "decided by · agreement with people"], rows)
        + skipped_records_html({"skipped": summary.get("skipped") or [], "failed": failed})
    )
    return Section(FIGURES_ID, "All figures", cards, body)


def _value(part: Row | None) -> float | None:
    if not part or not part.get("den"):
        return None
    return float(part["num"]) / float(part["den"])


def _gsr_goals(line: Row) -> str:
    goals = (line.get("goal_success") or {}).get("goals") or []
    if not goals:
        return ""
    rows = [
        [
            escape(f"{g['start_turn']}–{g['end_turn']}"),
            escape({True: "success", False: "failure"}.get(g.get("success"), "undecided")),
            escape(str(g.get("rcof") or "")),
        ]
        for g in goals
    ]
    return "<h4>Goals (segmentation and Goal Success Rate)</h4>" + table(
        ["turns", "goal", "root cause"], rows
    )


def _tracked_goals(line: Row) -> str:
    goals = (line.get("goal_tracking") or {}).get("goals") or []
    if not goals:
        return ""
    rows = [
        [
            escape(str(g.get("goal_id"))),
            escape(" / ".join(str(g.get(k)) for k in ("service", "intent") if g.get(k))),
            escape(shorten(g.get("description"), 120)),
            escape(str(g.get("status"))),
        ]
        for g in goals
    ]
    return "<h4>Goals the tracker held (ATOD)</h4>" + table(
        ["goal", "service / intent", "description", "final status"], rows
    )


def _turns(line: Row, dialogue: Row | None) -> str:
    if not dialogue:
        return ""
    voted = {
        t["turn_number"]: t
        for g in (line.get("goal_success") or {}).get("goals") or []
        for t in g.get("turns") or []
    }
    rows = []
    for turn in dialogue.get("turns") or []:
        vote = voted.get(turn.get("turn_number")) or {}
        rows.append(
            [
                escape(str(turn.get("turn_number"))),
                escape(shorten(turn.get("user_msg"), 300)),
                escape(shorten(turn.get("response"), 300)),
                escape(str(vote.get("quality") or "")),
                escape(str(vote.get("rcof") or "")),
            ]
        )
    return "<h4>Turns</h4>" + table(["turn", "user", "response", "quality", "root cause"], rows)


def _drilldown(line: Row, dialogue: Row | None) -> str:
    parts = [_gsr_goals(line), _tracked_goals(line), _turns(line, dialogue)]
    if line.get("error"):
        parts.insert(0, f'<p class="note">Failed: {escape(str(line["error"]))}</p>')
    shift = line.get("goal_shift")
    if shift:
        parts.append(
            f"<p>TSR {fmt_pct(shift.get('tsr'))}, TUE {fmt_pct(shift.get('tue'))}, "
            f"{escape(str(len(shift.get('shifts') or [])))} goal shifts.</p>"
        )
    memory = line.get("memory")
    if memory:
        parts.append(
            f"<p>Confirmation: {escape(shorten(memory.get('response'), 300))} "
            f"(DTE {fmt_num(memory.get('dte'), 0)})</p>"
        )
    return "".join(parts) or '<p class="note">Nothing to show.</p>'


def records_section(lines: Sequence[Row], dialogues: Mapping[str, Row], *, total: int) -> Section:
    """Each record's figures; a record opens onto its goals and turns.

    Args:
        lines: ``results.jsonl`` lines to show (the first ones of the run).
        dialogues: Each shown record's dialogue view (``turns`` with ``user_msg``/``response``).
        total: How many records the run has (the rest are in results.jsonl).
    """
    headers = ["record", "kind", "status", *(METRICS[name].label for name in RECORD_COLUMNS)]
    rows = []
    details = []
    for line in lines:
        rid = str(line.get("record_id"))
        aid = anchor_id(RECORDS_ID, rid)
        metrics = line.get("metrics") or {}
        rows.append(
            [
                f'<a href="#{aid}">{escape(rid)}</a>',
                escape(str(line.get("kind"))),
                escape(str(line.get("status"))),
                *(_cell(name, _value(metrics.get(name))) for name in RECORD_COLUMNS),
            ]
        )
        details.append(
            f'<details id="{aid}"><summary>{escape(rid)} ({escape(str(line.get("kind")))}, '
            f"{escape(', '.join(line.get('suites') or []))})</summary>"
            f"{_drilldown(line, dialogues.get(rid))}</details>"
        )
    more = (
        f'<p class="note">The first {len(lines)} of {total} records; every record is in '
        "results.jsonl.</p>"
        if total > len(lines)
        else ""
    )
    body = more + table(headers, rows) + "<h3>Drill-down</h3>" + "".join(details)
    return Section(RECORDS_ID, "Records", [("shown", str(len(lines)))], body)
