"""The top-level sections of the evaluation report: every figure, and each record's drill-down.

:func:`figures_section` shows every corpus figure by suite with the run's counts;
:func:`records_section` lists the records, each opening (``<details>``, no script) onto its
goals and turns; :func:`proactive_section` the ProactiveEval figures. Drawn by
``evaluation_figures.html.j2`` (the overview's lead: ``evaluation_figures_lead.html.j2``) and
``evaluation_records.html.j2``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from markupsafe import Markup

from todeval.evals.metrics.proactive.suite import ProactiveSuite
from todeval.evals.metrics.record_metrics import METRICS
from todeval.evals.report.formatting import MISSING
from todeval.evals.report.page import Section, anchor_id, fmt_num, fmt_pct, shorten, table
from todeval.evals.report.templating import Rendered, render
from todeval.evals.report.validity import (
    floor_basis,
    floor_text,
    validity_view,
    validity_warnings,
)

FIGURES_ID = "evaluation"
RECORDS_ID = "records"
PROACTIVE_ID = "proactive"
#: Figures that are counts, turns or 1-10 scores, not fractions.
NOT_FRACTIONS = frozenset({"dte", "proactive_plan_score", "proactive_guidance_score"})
#: Per-record figures shown as columns of the records table.
RECORD_COLUMNS = ("gsr", "goal_detection_f1", "status_accuracy", "tsr", "jga", "dte")
#: Transcript issues listed (the rest are in summary.json).
MAX_ISSUES = 50
#: ProactiveEval verdicts listed (the rest are in results.jsonl).
REPORT_ROWS = 300

Row = Mapping[str, Any]


def _text(name: str, value: Any) -> str:
    return fmt_num(value) if name in NOT_FRACTIONS else fmt_pct(value)


def figures_section(summary: Row) -> Section:
    """Every corpus figure in one table, with who decided it; then skipped and failed records."""
    values: Mapping[str, Any] = summary.get("metrics") or {}
    validity: Mapping[str, Any] = summary.get("validity") or {}
    floors: Mapping[str, Any] = summary.get("floors") or {}
    rows = [
        {"suite": info.suite, "label": info.label, "value": _text(name, values.get(name)),
         "floor": floor_text(floors.get(name), fraction=name not in NOT_FRACTIONS),
         "decided_by": validity_view(validity.get(name))}
        for name, info in METRICS.items()
        if name in values
    ]  # fmt: skip
    counts = summary.get("counts") or {}
    cards = [
        ("records", str(counts.get("records", 0))),
        ("skipped", str(counts.get("skipped_records", 0))),
        ("failed", str(counts.get("failed_records", 0))),
        ("paused", str(counts.get("paused_records", 0))),
        ("transcript issues", str(counts.get("transcript_issues", 0))),
        ("repeated records", str((summary.get("duplicate_records") or {}).get("count", 0))),
    ]
    failed = [{"dialogue_id": f.get("record_id"), "error": f.get("error")} for f in
              summary.get("failed") or []]  # fmt: skip
    issues = summary.get("transcript_issues") or []
    issue_rows = [
        [str(i.get(k, "")) for k in ("dialogue_id", "field", "message")]
        for i in issues[:MAX_ISSUES]
    ]
    body = render(
        "evaluation_figures.html.j2",
        warnings=validity_warnings(validity, values),
        by_suite=", ".join(f"{s}: {n}" for s, n in (counts.get("by_suite") or {}).items()),
        skipped={"skipped": summary.get("skipped") or [], "failed": failed},
        issues=issue_rows,
        n_issues=len(issues),
    )
    both = {"gsr", "dgcr"} <= values.keys()
    lead = (
        render(
            "evaluation_figures_lead.html.j2",
            rows=rows,
            both_goal_notions=both,
            floors=floor_basis(floors),
        )
        if rows
        else None
    )
    return Section(FIGURES_ID, "All figures", cards, body, lead)


def _value(part: Row | None) -> float | None:
    if not part or not part.get("den"):
        return None
    return float(part["num"]) / float(part["den"])


def _gsr_goals(line: Row) -> list[list[str]]:
    return [
        [f"{g['start_turn']}–{g['end_turn']}",
         {True: "success", False: "failure"}.get(g.get("success"), "undecided"),
         str(g.get("rcof") or "")]
        for g in (line.get("goal_success") or {}).get("goals") or []
    ]  # fmt: skip


def _tracked_goals(line: Row) -> list[list[str]]:
    return [
        [str(g.get("goal_id")), " / ".join(str(g[k]) for k in ("service", "intent") if g.get(k)),
         shorten(g.get("description"), 120), str(g.get("status"))]
        for g in (line.get("goal_tracking") or {}).get("goals") or []
    ]  # fmt: skip


def _turns(line: Row, dialogue: Row | None) -> list[list[str]]:
    if not dialogue:
        return []
    voted = {
        t["turn_number"]: t
        for g in (line.get("goal_success") or {}).get("goals") or []
        for t in g.get("turns") or []
    }
    rows = []
    for turn in dialogue.get("turns") or []:
        vote = voted.get(turn.get("turn_number")) or {}
        rows.append(
            [str(turn.get("turn_number")), shorten(turn.get("user_msg"), 300),
             shorten(turn.get("response"), 300), str(vote.get("quality") or ""),
             str(vote.get("rcof") or "")]
        )  # fmt: skip
    return rows


def _proactive_scores(line: Row) -> list[list[str]]:
    """Each ProactiveEval task the record was scored on: its judge, score and basis."""
    scored: Row = line.get("proactive") or {}
    rows = []
    for task, key, score, basis in (
        ("target planning", "plan_verdict", "score", "basis"),
        ("dialogue guidance", "guidance_verdict", "overall", "overall_basis"),
    ):
        verdict = (scored.get("plan" if key == "plan_verdict" else "guidance") or {}).get(key)
        if verdict:
            rows.append([task, str(verdict.get("judge")), fmt_num(verdict.get(score)),
                         shorten(verdict.get(basis), 200)])  # fmt: skip
    return rows


def _drilldown(line: Row, dialogue: Row | None) -> dict[str, Any]:
    shift, memory = line.get("goal_shift"), line.get("memory")
    return {
        "error": str(line["error"]) if line.get("error") else None,
        "gsr_goals": _gsr_goals(line),
        "tracked_goals": _tracked_goals(line),
        "turns": _turns(line, dialogue),
        "shift": {"tsr": fmt_pct(shift.get("tsr")), "tue": fmt_pct(shift.get("tue")),
                  "shifts": len(shift.get("shifts") or [])} if shift else None,
        "memory": {"response": shorten(memory.get("response"), 300),
                   "dte": fmt_num(memory.get("dte"), 0)} if memory else None,
        "proactive": _proactive_scores(line),
    }  # fmt: skip


def records_section(lines: Iterable[Row], dialogues: Mapping[str, Row], *, total: int) -> Section:
    """Each record's figures; a record opens onto its goals and turns.

    ``lines`` is read twice (the table, then the drill-downs) and ``dialogues`` once per record,
    so lines and dialogues that unpack on read (:class:`~evals.metrics.running.Packed`,
    :class:`~evals.metrics.running.PackedMap`) are held one record at a time (issue 32).
    """
    records: list[dict[str, Any]] = []
    for line in lines:
        rid = str(line.get("record_id"))
        metrics = line.get("metrics") or {}
        records.append(
            {"id": rid, "anchor": anchor_id(RECORDS_ID, rid), "kind": str(line.get("kind")),
             "status": str(line.get("status")), "suites": ", ".join(line.get("suites") or []),
             "figures": [_text(name, _value(metrics.get(name))) for name in RECORD_COLUMNS]}
        )  # fmt: skip
    # A figure no shown record has (gold-only ones on logs without gold) gets no column.
    kept = [
        k for k in range(len(RECORD_COLUMNS)) if any(r["figures"][k] != MISSING for r in records)
    ]
    for record in records:
        record["figures"] = [record["figures"][k] for k in kept]
    body = Rendered(
        "evaluation_records.html.j2",
        headers=["record", "kind", "status", *(METRICS[RECORD_COLUMNS[k]].label for k in kept)],
        records=records,
        drilled=_Drilled(records, lines, dialogues),
        total=total,
    )
    return Section(RECORDS_ID, "Records", [("shown", str(len(records)))], body)


class _Drilled:
    """Each record with its drill-down, built when the template reaches it."""

    def __init__(
        self, records: Sequence[Row], lines: Iterable[Row], dialogues: Mapping[str, Row]
    ) -> None:
        self.records, self.lines, self.dialogues = records, lines, dialogues

    def __iter__(self) -> Iterator[tuple[Row, dict[str, Any]]]:
        for record, line in zip(self.records, self.lines, strict=True):
            yield record, _drilldown(line, self.dialogues.get(record["id"]))


def proactive_section(summary: Row, lines: Sequence[Row]) -> Section:
    """ProactiveEval's figures (mean 1-10 scores), who judged them, and why a judge abstained.

    Built from the shared table macro (escaped), so it needs no template of its own.
    """
    figures: Mapping[str, Row] = summary.get("figures") or {}
    rows = [
        [METRICS[name].label, fmt_num(figure.get("value")), str(figure.get("scored")),
         str(figure.get("abstained")), ", ".join(figure.get("judges") or []),
         "; ".join(figure.get("abstain_reasons") or [])]
        for name, figure in figures.items()
    ]  # fmt: skip
    counts = summary.get("counts") or {}
    verdicts = [[str(line.get("record_id")), *row] for line in lines
                for row in _proactive_scores({"proactive": line})]  # fmt: skip
    judges = [[role, str(spec)] for role, spec in (summary.get("judges") or {}).items()]
    density = [fmt_num(summary.get(k)) for k in ("target_density", "initiation_density")]
    body = Markup(
        "<p>{} records: {} target plans, {} guidance dialogues, scored against their "
        "environment's reference (Listings 11 and 12). A figure is the mean 1-10 score over the "
        "records its judge scored; a judge that abstains gives no score, and says why.</p>"
    ).format(counts.get("records", 0), counts.get("plans", 0), counts.get("dialogues", 0))
    body += table(["figure", "mean (1-10)", "scored", "abstained", "judges", "why abstained"], rows)
    if counts.get("dialogues"):
        body += Markup(
            "<p>Target density (sub-targets per agent message, Listing 13): {}; initiation "
            "density (sub-targets in the opening message): {}.</p>"
        ).format(*density)
    body += Markup("<h3>Judges</h3>") + table(["role", "spec"], judges)
    if verdicts:
        headers = ["record", "task", "judge", "score", "basis"]
        body += Markup("<h3>Verdicts</h3>") + table(headers, verdicts[:REPORT_ROWS])
    cards = [(METRICS[name].label, fmt_num(f.get("value"))) for name, f in figures.items()]
    return Section(PROACTIVE_ID, "ProactiveEval (paper 003)", cards, body)


def proactive_evaluation_section(summary: Row, suite: ProactiveSuite) -> Section:
    """ProactiveEval's section of the evaluation report."""
    return proactive_section(summary, suite.lines)
