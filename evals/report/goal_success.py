"""The Goal Success Rate section of the report (paper 004, "Mind the Goal").

Headline figures, GSR by goal length, root causes (E1-E7), teacher agreement with gold and
human labels, calibration, and the failed goals with drill-downs
(:mod:`evals.report.goal_success_drilldown`). Drawn by ``goal_success.html.j2``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from todeval.evals.metrics.goal_success.success_rate import LENGTH_BUCKETS, UNDECIDED_REASONS
from todeval.evals.metrics.goal_success.suite import GoalSuccessSuite
from todeval.evals.report.goal_success_drilldown import SECTION_ID, Record, failed_goals
from todeval.evals.report.page import MISSING, Section, as_number, fmt_num, fmt_pct
from todeval.evals.report.svg import Series, bar_chart
from todeval.evals.report.templating import Rendered
from todeval.evals.report.validity import validity_view, validity_warnings
from todeval.evals.schema import RCOF_CODES

__all__ = ["SECTION_ID", "goal_success_section"]

_AGREEMENT = (
    ("quality", "accuracy"),
    ("quality", "kappa"),
    ("quality", "n"),
    ("rcof", "accuracy"),
    ("rcof", "kappa"),
    ("rcof", "n"),
    ("rcof", "coverage"),
)


def _overview(summary: Record) -> list[tuple[str, str]]:
    kappa = (summary.get("teacher_kappa") or {}).get("quality") or {}
    return [
        ("GSR", fmt_pct(summary.get("gsr"))),
        ("GSR single-turn", fmt_pct(summary.get("gsr_single_turn"))),
        ("GSR multi-turn", fmt_pct(summary.get("gsr_multi_turn"))),
        ("goals", fmt_num(summary.get("n_goals"))),
        ("undecided goals", fmt_num(summary.get("undecided_goals"))),
        ("GSR if undecided failed / succeeded", _bounds(summary)),
        ("ambiguous turns", fmt_pct(summary.get("ambiguous_share"))),
        ("Fleiss' κ (quality)", fmt_num(kappa.get("fleiss_kappa"))),
    ]


def _undecided_why(summary: Record) -> str:
    reasons = summary.get("undecided_goals_by_reason") or {}
    if not reasons:
        return "none undecided"
    return "; ".join(f"{n}: {UNDECIDED_REASONS.get(key, key)}" for key, n in reasons.items())


def _bounds(summary: Record) -> str:
    bounds = summary.get("gsr_bounds") or {}
    return f"{fmt_pct(bounds.get('lower'))} – {fmt_pct(bounds.get('upper'))}"


def _key_figures(summary: Record) -> list[tuple[str, list[str]]]:
    counts, judges, get = summary.get("counts") or {}, summary.get("judges") or {}, summary.get
    teachers = ", ".join(str(t) for t in judges.get("turn_quality") or []) or MISSING
    n = fmt_num
    return [
        ("dialogues / turns", [n(counts.get("dialogues")), n(counts.get("turns"))]),
        ("goals / single-turn / multi-turn", [n(get("n_goals")), n(get("n_single_turn_goals")),
                                              n(get("n_multi_turn_goals"))]),
        ("failed / undecided goals", [n(get("failed_goals")), n(get("undecided_goals"))]),
        ("undecided goals, why", [_undecided_why(summary)]),
        ("GSR if every undecided goal failed / succeeded", [_bounds(summary)]),
        ("failed goals without a root cause", [n(get("rcof_unattributed"))]),
        ("fractional credit (mean share of good turns)", [fmt_pct(get("fractional_credit"))]),
        ("last-turn success rate", [fmt_pct(get("last_turn_success_rate"))]),
        ("ambiguous turns / share", [n(get("ambiguous")), fmt_pct(get("ambiguous_share"))]),
        ("turns pending review / human verdicts", [n(get("pending_review")),
                                                   n(get("human_verdicts"))]),
        ("skipped records / failed dialogues", [n(counts.get("skipped_records")),
                                                n(counts.get("failed_dialogues"))]),
        ("segmenter", [str(judges.get("segmentation") or MISSING)]),
        ("teachers", [teachers]),
    ]  # fmt: skip


def _length_chart(summary: Record) -> dict[str, Any]:
    by_length = summary.get("gsr_by_length") or {}
    cells = [by_length.get(k) or {} for k in LENGTH_BUCKETS]
    labels = [f"{fmt_pct(c.get('gsr'), 0)} · n={fmt_num(c.get('n'))}" for c in cells]
    svg = bar_chart(
        [f"{k} turn{'' if k == '1' else 's'}" for k in LENGTH_BUCKETS],
        [Series("GSR", [as_number(c.get("gsr")) for c in cells], labels)],
        title="GSR by goal length",
        horizontal=False,
        domain=(0.0, 1.0),
        fmt=lambda v: f"{v * 100:.0f}%",
        plot_height=180,
    )
    return {"svg": svg, "caption": "GSR by goal length (turns per goal); n = goals of that length."}


def _rcof_chart(summary: Record) -> dict[str, Any]:
    counts, shares = summary.get("rcof") or {}, summary.get("rcof_share") or {}
    labels = [f"{fmt_num(counts.get(c))} ({fmt_pct(shares.get(c))})" for c in RCOF_CODES]
    svg = bar_chart(
        [f"{code} {name}" for code, name in RCOF_CODES.items()],
        [Series("failed goals", [as_number(counts.get(c)) for c in RCOF_CODES], labels)],
        title="Root causes of failure",
        fmt=lambda v: f"{v:g}",
    )
    caption = (
        "Root cause of each failed goal (the code of its earliest failed turn): count and share "
        f"of failed goals; {fmt_num(summary.get('rcof_unattributed'))} have no root cause."
    )
    return {"svg": svg, "caption": caption}


def _agreement_block(block: Record, name: str) -> dict[str, Any]:
    rows = [(str(t.get("judge")), t) for t in block.get("teachers") or []]
    rows.append(("vote", block.get("vote") or {}))

    def stat(row: Record, part: str, key: str) -> Any:
        return (row.get(part) or {}).get(key)

    series = [
        Series(
            f"{'RCOF' if part == 'rcof' else part} {'κ' if key == 'kappa' else key}",
            [as_number(stat(row, part, key)) for _, row in rows],
            [(fmt_pct if key == "accuracy" else fmt_num)(stat(row, part, key)) for _, row in rows],
        )
        for part, key in _AGREEMENT
        if key in ("accuracy", "kappa")
    ]
    cells = [
        [judge]
        + [
            (fmt_pct if key in ("accuracy", "coverage") else fmt_num)(stat(row, p, key))
            for p, key in _AGREEMENT
        ]
        for judge, row in rows
    ]
    return {
        "name": name,
        "n_turns": fmt_num(block.get("n_turns")),
        "svg": bar_chart([judge for judge, _ in rows], series, title=f"Agreement with {name}"),
        "caption": f"Accuracy and Cohen's κ of each teacher and of the vote against {name}.",
        "rows": cells,
    }


def _agreement(summary: Record) -> dict[str, Any]:
    kappa = summary.get("teacher_kappa") or {}
    fleiss = [
        (label, fmt_num((kappa.get(key) or {}).get("fleiss_kappa")),
         fmt_num((kappa.get(key) or {}).get("n_turns")))
        for key, label in (("quality", "turn quality"), ("outcome", "goal outcome"))
    ]  # fmt: skip
    blocks = [
        (name, _agreement_block(block, name) if (block := summary.get(key)) else None)
        for key, name in (("gold_agreement", "gold labels"), ("human_agreement", "human verdicts"))
    ]
    return {"fleiss": fleiss, "blocks": blocks}


_CAUSE_ORDER = ("success", *RCOF_CODES)
"""Root-cause columns of the calibration tables: success first, then E1-E7, then the rest."""


def _causes(rows: Sequence[Record]) -> list[str]:
    seen = {str(cause) for row in rows for cause in row.get("by_root_cause") or {}}
    return [c for c in _CAUSE_ORDER if c in seen] + sorted(seen - set(_CAUSE_ORDER))


def _cause_cell(row: Record, cause: str) -> list[str]:
    """Agreement on the turns people gave ``cause``, with agreed / verdicts."""
    cell = (row.get("by_root_cause") or {}).get(cause) or {}
    n, agreed = fmt_num(cell.get("n")), fmt_num(cell.get("agreed"))
    return [fmt_pct(cell.get("agreement")), " (", agreed, "/", n, ")"]


def _flag_cell(row: Record) -> str:
    if not row.get("flagged"):
        return "no"
    reason = row.get("flag_reason")
    return f"yes: {reason}" if reason else "yes"


def _calibration_rows(rows: Sequence[Record], causes: Sequence[str]) -> list[list[Any]]:
    """One row per teacher: verdicts, agreement, audited / escalated, per cause, flag."""

    def part(row: Record, key: str) -> Record:
        found = row.get(key)
        return found if isinstance(found, Mapping) else {}

    return [
        [str(row.get("judge")), fmt_num(row.get("n")), fmt_pct(row.get("agreement")),
         fmt_pct(row.get("quality_agreement")),
         fmt_num(part(row, "audited").get("n")), fmt_pct(part(row, "audited").get("agreement")),
         fmt_num(part(row, "escalated").get("n")),
         fmt_pct(part(row, "escalated").get("agreement")),
         *[_cause_cell(row, cause) for cause in causes], _flag_cell(row)]
        for row in rows
    ]  # fmt: skip


def _applied_rows(rows: Sequence[Record], causes: Sequence[str]) -> list[list[Any]]:
    """One row per teacher of this run's panel, with its earlier calibration."""
    return [
        [str(row.get("judge")), fmt_num(row.get("n")), fmt_pct(row.get("agreement")),
         *[_cause_cell(row, cause) for cause in causes], "yes" if row.get("flagged") else "no"]
        for row in rows
    ]  # fmt: skip


def _calibration(summary: Record) -> dict[str, Any] | None:
    """The per-teacher calibration tables, or None when the run has no ``calibration``."""
    block = summary.get("calibration")
    if not isinstance(block, Mapping):
        return None
    view: dict[str, Any] = {"this_run": None, "applied": None}
    if current := block.get("this_run"):
        rows = current.get("teachers") or []
        causes = _causes(rows)
        view["this_run"] = {
            "n_verdicts": fmt_num(current.get("n_verdicts")),
            "file": str(block.get("file") or MISSING),
            "flag_below": fmt_pct(current.get("flag_below")),
            "min_verdicts": fmt_num(current.get("min_verdicts")),
            "flag_basis": str(current.get("flag_basis") or ""),
            "headers": ["teacher", "verdicts", "agreement", "quality agreement", "audited",
                        "audited agreement", "escalated", "escalated agreement",
                        *[f"on {cause}" for cause in causes], "flagged"],
            "rows": _calibration_rows(rows, causes),
        }  # fmt: skip
    if applied := block.get("applied"):
        rows = applied.get("teachers") or []
        causes = _causes(rows)
        view["applied"] = {
            "source": str(applied.get("source") or MISSING),
            "n_verdicts": fmt_num(applied.get("n_verdicts")),
            "flagged": ", ".join(str(j) for j in applied.get("flagged") or []) or "none",
            "leaning": fmt_num(applied.get("votes_leaning_on_flagged")),
            "headers": ["teacher", "earlier verdicts", "earlier agreement",
                        *[f"on {cause}" for cause in causes], "flagged"],
            "rows": _applied_rows(rows, causes),
        }  # fmt: skip
    return view


def _count(summary: Record) -> int | None:
    """The run's failed goals (its tally passes only the first ones it shows)."""
    count = summary.get("failed_goals")
    return count if isinstance(count, int) else None


def goal_success_section(
    summary: Record,
    goals: Sequence[Record],
    dialogues: Mapping[str, Record] | None = None,
    *,
    max_failed_goals: int = 500,
) -> Section:
    """The Goal Success Rate section: figures, plots, failed goals and their drill-downs.

    Args:
        summary: The GSR run's ``summary.json``; any figure may be ``None`` (shown as ``—``).
        goals: Its ``goals.jsonl`` lines, or only the first failed ones.
        dialogues: The dialogue records by id, for the drill-downs' text (optional).
        max_failed_goals: At most this many failed goals are listed and drilled into.
    """
    validity = summary.get("validity") or {}
    body = Rendered(  # drawn piece by piece as the page is written: up to 500 failed dialogues
        "goal_success.html.j2",
        warnings=validity_warnings(validity, {"gsr": summary.get("gsr")}),
        decided_by=validity_view(validity["gsr"]) if "gsr" in validity else None,
        key_figures=_key_figures(summary),
        charts=[_length_chart(summary), _rcof_chart(summary)],
        agreement=_agreement(summary),
        calibration=_calibration(summary),
        failed_goals=failed_goals(goals, dialogues, max_failed_goals, _count(summary)),
        summary=summary,
    )
    return Section(SECTION_ID, "Goal Success Rate", _overview(summary), body)


def goal_success_evaluation_section(summary: Record, suite: GoalSuccessSuite) -> Section:
    """Goal success's section of the evaluation report."""
    return goal_success_section(summary, *suite.tally.report_view())
