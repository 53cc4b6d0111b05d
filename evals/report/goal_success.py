"""The Goal Success Rate section of the report (paper 004, "Mind the Goal").

It reads a GSR run's ``summary.json``, its ``goals.jsonl`` lines and, optionally, the dialogue
records, and shows: the headline figures, GSR by goal length, the root causes of failure
(E1-E7, the earliest failed turn's code), the teachers' agreement with gold and human labels,
and the failed goals with a drill-down of their dialogues
(:mod:`evals.report.goal_success_drilldown`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from evals.metrics.goal_success.success_rate import LENGTH_BUCKETS, UNDECIDED_REASONS
from evals.report.goal_success_drilldown import SECTION_ID, Record, failed_goals_html
from evals.report.page import (
    MISSING,
    Section,
    as_number,
    figure,
    fmt_num,
    fmt_pct,
    num_html,
    pct_html,
    skipped_records_html,
    table,
)
from evals.report.svg import Series, bar_chart
from evals.report.validity import validity_html, validity_warning_html
from evals.schema import RCOF_CODES

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


def _key_figures(summary: Record) -> str:
    counts, judges, get = summary.get("counts") or {}, summary.get("judges") or {}, summary.get
    teachers = ", ".join(str(t) for t in judges.get("teachers") or []) or MISSING
    rows = [
        ("dialogues / turns", num_html(counts.get("dialogues")), num_html(counts.get("turns"))),
        ("goals / single-turn / multi-turn", num_html(get("n_goals")),
         num_html(get("n_single_turn_goals")), num_html(get("n_multi_turn_goals"))),
        ("failed / undecided goals", num_html(get("failed_goals")),
         num_html(get("undecided_goals"))),
        ("undecided goals, why", escape(_undecided_why(summary))),
        ("GSR if every undecided goal failed / succeeded", escape(_bounds(summary))),
        ("failed goals without a root cause", num_html(get("rcof_unattributed"))),
        ("fractional credit (mean share of good turns)", pct_html(get("fractional_credit"))),
        ("last-turn success rate", pct_html(get("last_turn_success_rate"))),
        ("ambiguous turns / share", num_html(get("ambiguous")), pct_html(get("ambiguous_share"))),
        ("turns pending review / human verdicts", num_html(get("pending_review")),
         num_html(get("human_verdicts"))),
        ("skipped records / failed dialogues", num_html(counts.get("skipped_records")),
         num_html(counts.get("failed_dialogues"))),
        ("segmenter", escape(str(judges.get("segmenter") or MISSING))),
        ("teachers", escape(teachers)),
    ]  # fmt: skip
    body = "".join(f"<tr><th>{escape(k)}</th><td>{' / '.join(v)}</td></tr>" for k, *v in rows)
    return f'<h3>Key figures</h3><table class="meta"><tbody>{body}</tbody></table>'


def _length_chart(summary: Record) -> str:
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
    return figure(svg, "GSR by goal length (turns per goal); n = goals of that length.")


def _rcof_chart(summary: Record) -> str:
    counts, shares = summary.get("rcof") or {}, summary.get("rcof_share") or {}
    labels = [f"{fmt_num(counts.get(c))} ({fmt_pct(shares.get(c))})" for c in RCOF_CODES]
    svg = bar_chart(
        [f"{code} {name}" for code, name in RCOF_CODES.items()],
        [Series("failed goals", [as_number(counts.get(c)) for c in RCOF_CODES], labels)],
        title="Root causes of failure",
        fmt=lambda v: f"{v:g}",
    )
    return figure(
        svg,
        "Root cause of each failed goal (the code of its earliest failed turn): count and share "
        f"of failed goals; {fmt_num(summary.get('rcof_unattributed'))} have no root cause.",
    )


def _agreement_block(block: Record, name: str) -> str:
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
    svg = bar_chart([judge for judge, _ in rows], series, title=f"Agreement with {name}")
    cells = [
        [escape(judge)]
        + [
            (pct_html if key in ("accuracy", "coverage") else num_html)(stat(row, p, key))
            for p, key in _AGREEMENT
        ]
        for judge, row in rows
    ]
    headers = ["judge", "quality acc.", "quality κ", "n", "RCOF acc.", "RCOF κ", "n", "coverage"]
    caption = f"Accuracy and Cohen's κ of each teacher and of the vote against {name}."
    return (
        f"<h4>Against {escape(name)} ({num_html(block.get('n_turns'))} turns)</h4>"
        + figure(svg, caption)
        + table(headers, cells)
    )


def _agreement(summary: Record) -> str:
    kappa = summary.get("teacher_kappa") or {}
    fleiss = "; ".join(
        f"{label} {num_html((kappa.get(key) or {}).get('fleiss_kappa'))} over "
        f"{num_html((kappa.get(key) or {}).get('n_turns'))} turns"
        for key, label in (("quality", "turn quality"), ("outcome", "goal outcome"))
    )
    parts = [f"<h3>Teacher agreement</h3><p>Fleiss' κ among the teachers: {fleiss}.</p>"]
    for key, name in (("gold_agreement", "gold labels"), ("human_agreement", "human verdicts")):
        block = summary.get(key)
        parts.append(
            _agreement_block(block, name) if block else f'<p class="note">No {name} to compare.</p>'
        )
    return "".join(parts)


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
        goals: The lines of its ``goals.jsonl``.
        dialogues: The dialogue records by id, for the text of the drill-downs (optional:
            without them the drill-downs show labels only).
        max_failed_goals: At most this many failed goals are listed and drilled into; a note
            says how many more there are.

    Returns:
        The section, with id ``goal-success``.
    """
    validity = summary.get("validity") or {}
    decided_by = (
        f'<p class="note">GSR decided by: {validity_html(validity["gsr"])}</p>'
        if "gsr" in validity
        else ""
    )
    body = (
        validity_warning_html(validity, {"gsr": summary.get("gsr")})
        + "<p>A goal succeeds only when every one of its turns succeeds (strict GSR, paper 004); "
        "a failed goal's root cause is the code of its earliest failed turn.</p>"
        + decided_by
        + _key_figures(summary)
        + "<h3>Plots</h3>"
        + _length_chart(summary)
        + _rcof_chart(summary)
        + _agreement(summary)
        + failed_goals_html(goals, dialogues, max_failed_goals)
        + skipped_records_html(summary)
    )
    return Section(SECTION_ID, "Goal Success Rate", _overview(summary), body)
