"""The Goal Success Rate section of the report (paper 004, "Mind the Goal").

It reads a GSR run's ``summary.json``, its ``goals.jsonl`` lines and, optionally, the dialogue
records, and shows: the headline figures, GSR by goal length, the root causes of failure
(E1-E7, the earliest failed turn's code), the teachers' agreement with gold and human labels,
a table of failed goals and, for each of their dialogues, a drill-down of every goal and turn
with each teacher's label and rationale. Goals are shown 1-based (``G1`` is ``goal_index`` 0).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from evals.report.page import (
    MISSING,
    Section,
    anchor_id,
    as_number,
    figure,
    fmt_num,
    fmt_pct,
    shorten,
    table,
    value_html,
)
from evals.report.svg import Series, bar_chart
from evals.schema import RCOF_CODES

SECTION_ID = "goal-success"
_LENGTHS = ("1", "2", "3", "4+")
_DECIDED = {"vote": "vote", "single_teacher": "single teacher", "human": "human"}
_AGREEMENT = (
    ("quality", "accuracy"),
    ("quality", "kappa"),
    ("quality", "n"),
    ("rcof", "accuracy"),
    ("rcof", "kappa"),
    ("rcof", "n"),
    ("rcof", "coverage"),
)
Record = Mapping[str, Any]


def _n(value: Any) -> str:
    return value_html(fmt_num(value))


def _p(value: Any) -> str:
    return value_html(fmt_pct(value))


def _span(range_of: Record) -> str:
    return f"{escape(str(range_of.get('start_turn')))}–{escape(str(range_of.get('end_turn')))}"


def _goal_name(goal: Record) -> str:
    index = goal.get("goal_index")
    return f"G{index + 1}" if isinstance(index, int) else "G?"


def _badge(text: str, cls: str) -> str:
    return f'<span class="badge {cls}">{escape(text)}</span>'


def _quality(label: Any) -> str:
    if label == "success":
        return _badge("success", "ok")
    return _badge("failure", "bad") if label == "failure" else _badge("no label", "muted")


def _rcof(code: Any) -> str:
    if not code:
        return '<span class="muted">unattributed</span>'
    return f"<b>{escape(str(code))}</b> {escape(RCOF_CODES.get(str(code), 'unknown code'))}"


def _goal_status(goal: Record) -> str:
    success = goal.get("success")
    if success is True:
        status = _badge("success", "ok")
    else:
        status = _badge("failed", "bad") if success is False else _badge("undecided", "muted")
    return status + (" " + _badge("pending review", "warn") if goal.get("pending_review") else "")


def _overview(summary: Record) -> list[tuple[str, str]]:
    kappa = (summary.get("teacher_kappa") or {}).get("quality") or {}
    return [
        ("GSR", fmt_pct(summary.get("gsr"))),
        ("GSR single-turn", fmt_pct(summary.get("gsr_single_turn"))),
        ("GSR multi-turn", fmt_pct(summary.get("gsr_multi_turn"))),
        ("goals", fmt_num(summary.get("n_goals"))),
        ("undecided goals", fmt_num(summary.get("undecided_goals"))),
        ("ambiguous turns", fmt_pct(summary.get("ambiguous_share"))),
        ("Fleiss' κ (quality)", fmt_num(kappa.get("fleiss_kappa"))),
    ]


def _key_figures(summary: Record) -> str:
    counts, judges, get = summary.get("counts") or {}, summary.get("judges") or {}, summary.get
    teachers = ", ".join(str(t) for t in judges.get("teachers") or []) or MISSING
    rows = [
        ("dialogues / turns", _n(counts.get("dialogues")), _n(counts.get("turns"))),
        ("goals / single-turn / multi-turn", _n(get("n_goals")), _n(get("n_single_turn_goals")),
         _n(get("n_multi_turn_goals"))),
        ("failed / undecided goals", _n(get("failed_goals")), _n(get("undecided_goals"))),
        ("failed goals without a root cause", _n(get("rcof_unattributed"))),
        ("fractional credit (mean share of good turns)", _p(get("fractional_credit"))),
        ("last-turn success rate", _p(get("last_turn_success_rate"))),
        ("ambiguous turns / share", _n(get("ambiguous")), _p(get("ambiguous_share"))),
        ("turns pending review / human verdicts", _n(get("pending_review")),
         _n(get("human_verdicts"))),
        ("skipped records / failed dialogues", _n(counts.get("skipped_records")),
         _n(counts.get("failed_dialogues"))),
        ("segmenter", escape(str(judges.get("segmenter") or MISSING))),
        ("teachers", escape(teachers)),
    ]  # fmt: skip
    body = "".join(f"<tr><th>{escape(k)}</th><td>{' / '.join(v)}</td></tr>" for k, *v in rows)
    return f'<h3>Key figures</h3><table class="meta"><tbody>{body}</tbody></table>'


def _length_chart(summary: Record) -> str:
    by_length = summary.get("gsr_by_length") or {}
    cells = [by_length.get(k) or {} for k in _LENGTHS]
    labels = [f"{fmt_pct(c.get('gsr'), 0)} · n={fmt_num(c.get('n'))}" for c in cells]
    svg = bar_chart(
        [f"{k} turn{'' if k == '1' else 's'}" for k in _LENGTHS],
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
            (_p if key in ("accuracy", "coverage") else _n)(stat(row, p, key))
            for p, key in _AGREEMENT
        ]
        for judge, row in rows
    ]
    headers = ["judge", "quality acc.", "quality κ", "n", "RCOF acc.", "RCOF κ", "n", "coverage"]
    caption = f"Accuracy and Cohen's κ of each teacher and of the vote against {name}."
    return (
        f"<h4>Against {escape(name)} ({_n(block.get('n_turns'))} turns)</h4>"
        + figure(svg, caption)
        + table(headers, cells)
    )


def _agreement(summary: Record) -> str:
    kappa = summary.get("teacher_kappa") or {}
    fleiss = "; ".join(
        f"{label} {_n((kappa.get(key) or {}).get('fleiss_kappa'))} over "
        f"{_n((kappa.get(key) or {}).get('n_turns'))} turns"
        for key, label in (("quality", "turn quality"), ("outcome", "goal outcome"))
    )
    parts = [f"<h3>Teacher agreement</h3><p>Fleiss' κ among the teachers: {fleiss}.</p>"]
    for key, name in (("gold_agreement", "gold labels"), ("human_agreement", "human verdicts")):
        block = summary.get(key)
        parts.append(
            _agreement_block(block, name) if block else f'<p class="note">No {name} to compare.</p>'
        )
    return "".join(parts)


def _turn_records(dialogue: Record | None) -> dict[Any, Record]:
    return {t.get("turn_number"): t for t in (dialogue or {}).get("turns") or []}


def _teachers(turn: Record) -> str:
    teachers = turn.get("teachers") or []
    human = turn.get("human")
    if not teachers and not human:
        return '<span class="muted">none</span>'
    labels = list(teachers)
    if human:
        labels.insert(0, {"judge": "human", "rationale": human.get("note")} | dict(human))
    items = "".join(
        f"<li><b>{escape(str(t.get('judge')))}</b> {_quality(t.get('quality'))} "
        f"{escape(str(t.get('rcof') or ''))}<br>"
        f'<span class="msg">{escape(shorten(t.get("rationale"), 600))}</span></li>'
        for t in labels
    )
    votes = [str(t.get("quality") or "no label") for t in teachers]
    tally = ", ".join(f"{votes.count(v)} {v}" for v in dict.fromkeys(votes))
    tally += " + human" if human else ""
    return f'<details><summary>{escape(tally)}</summary><ul class="sources">{items}</ul></details>'


def _sources(record: Record) -> str:
    snippets, items = record.get("source_snippets") or [], []
    for i, name in enumerate(record.get("source_names") or []):
        snippet = escape(shorten(snippets[i], 200)) if i < len(snippets) else ""
        snippet = f'<br><span class="muted">{snippet}</span>' if snippet else ""
        items.append(f"<li>{escape(shorten(name, 80))}{snippet}</li>")
    return (
        f'<ul class="sources">{"".join(items)}</ul>' if items else '<span class="muted">none</span>'
    )


def _turn_row(turn: Record, record: Record) -> list[str]:
    decided = escape(_DECIDED.get(turn.get("decided_by") or "", "undecided"))
    return [
        escape(str(turn.get("turn_number"))),
        f'<span class="msg">{escape(shorten(record.get("user_msg"), 1500))}</span>',
        f'<span class="msg">{escape(shorten(record.get("response"), 1500))}</span>',
        _sources(record),
        _quality(turn.get("quality")) + (" " + _rcof(turn["rcof"]) if turn.get("rcof") else ""),
        (_badge("ambiguous", "warn") + " " if turn.get("ambiguous") else "") + decided,
        _teachers(turn),
    ]


def _drilldown(did: str, goals: Sequence[Record], dialogue: Record | None, aid: str) -> str:
    records = _turn_records(dialogue)
    parts = [
        f'<article class="drill" id="{aid}"><h4>Dialogue {escape(did)}</h4>'
        f'<a class="back" href="#{SECTION_ID}-failed">back to failed goals</a>'
    ]
    headers = ["#", "user", "assistant", "sources", "label", "decided by", "teachers"]
    for goal in goals:
        success = goal.get("success")
        cls = "succeeded" if success is True else "failed" if success is False else ""
        cause = f" · root cause {_rcof(goal.get('rcof'))}" if success is False else ""
        rows = [
            _turn_row(t, records.get(t.get("turn_number")) or {}) for t in goal.get("turns") or []
        ]
        parts.append(
            f'<div class="goal {cls}"><p><b>{_goal_name(goal)}</b> · turns {_span(goal)} · '
            f"{_goal_status(goal)}{cause} · fractional credit "
            f"{_p(goal.get('fractional_credit'))}</p>{table(headers, rows, cls='turns')}</div>"
        )
    if dialogue is None:
        parts.append('<p class="note">Dialogue text not given: labels only.</p>')
    return "".join(parts) + "</article>"


def _failed_goals(goals: Sequence[Record], dialogues: Mapping[str, Record] | None, cap: int) -> str:
    failed = [g for g in goals if g.get("success") is False]
    shown = failed[: max(cap, 0)]
    anchors = {did: anchor_id(f"{SECTION_ID}-d", did) for did in
               dict.fromkeys(str(g.get("dialogue_id")) for g in shown)}  # fmt: skip
    rows = []
    for goal in shown:
        did = str(goal.get("dialogue_id"))
        turn = next((t for t in goal.get("turns") or [] if t.get("quality") == "failure"), None)
        first = value_html(MISSING)
        if turn is not None:
            record = _turn_records((dialogues or {}).get(did)).get(turn.get("turn_number")) or {}
            message = escape(shorten(record.get("user_msg"), 120))
            first = f"T{escape(str(turn.get('turn_number')))}" + (f": {message}" if message else "")
        link = f'<a href="#{anchors[did]}">{escape(shorten(did, 48))}</a>'
        rows.append([link, _goal_name(goal), _span(goal), _rcof(goal.get("rcof")), first])
    headers = ["dialogue", "goal", "turns", "root cause", "first failed turn: user message"]
    parts = [
        f'<h3 id="{SECTION_ID}-failed">Failed goals ({len(failed)})</h3>',
        table(headers, rows) if failed else '<p class="note">No failed goals.</p>',
    ]
    if len(failed) > len(shown):
        hidden = len(failed) - len(shown)
        parts.append(
            f'<p class="note cap">{hidden} more failed goals not shown, nor their dialogues '
            f"(max_failed_goals={cap}).</p>"
        )
    if anchors:
        by_dialogue: dict[str, list[Record]] = defaultdict(list)
        for goal in goals:
            by_dialogue[str(goal.get("dialogue_id"))].append(goal)
        parts.append(f'<h3 id="{SECTION_ID}-drilldown">Failed dialogues, turn by turn</h3>')
        parts.extend(
            _drilldown(did, by_dialogue[did], (dialogues or {}).get(did), aid)
            for did, aid in anchors.items()
        )
    return "".join(parts)


def _skipped(summary: Record) -> str:
    skipped, failed = summary.get("skipped") or [], summary.get("failed") or []
    rows = [
        [escape(f"{s.get('file')}:{s.get('line')}"), escape(str(s.get("dialogue_id") or "")),
         escape(str(s.get("field") or "")), escape(str(s.get("message") or s.get("error")))]
        for s in skipped
    ] + [
        ["run failed", escape(str(f.get("dialogue_id"))), "", escape(str(f.get("error")))]
        for f in failed
    ]  # fmt: skip
    title = f"Skipped records ({len(skipped)}) and failed dialogues ({len(failed)})"
    headers = ["where", "dialogue", "field", "message"]
    return f"<h3>{title}</h3>{table(headers, rows)}" if rows else ""


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
    body = (
        "<p>A goal succeeds only when every one of its turns succeeds (strict GSR, paper 004); "
        "a failed goal's root cause is the code of its earliest failed turn.</p>"
        + _key_figures(summary)
        + "<h3>Plots</h3>"
        + _length_chart(summary)
        + _rcof_chart(summary)
        + _agreement(summary)
        + _failed_goals(goals, dialogues, max_failed_goals)
        + _skipped(summary)
    )
    return Section(SECTION_ID, "Goal Success Rate", _overview(summary), body)
