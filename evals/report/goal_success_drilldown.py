"""The failed goals of the Goal Success Rate section, and a drill-down of their dialogues.

A table of the failed goals (dialogue, goal, turns, root cause, the first failed turn's user
message) and, for each of their dialogues, a drill-down of every goal and turn with each
teacher's label and rationale. Goals are shown 1-based (``G1`` is ``goal_index`` 0). The rest
of the section (figures, plots, agreement) is :mod:`evals.report.goal_success`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from evals.report.page import MISSING, anchor_id, pct_html, shorten, table, value_html
from evals.schema import RCOF_CODES

#: Id of the Goal Success Rate section; the ids of the failed-goal table and drill-downs
#: start with it.
SECTION_ID = "goal-success"
_DECIDED = {"vote": "vote", "single_teacher": "single teacher", "human": "human"}
Record = Mapping[str, Any]


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
            f"{pct_html(goal.get('fractional_credit'))}</p>"
            f"{table(headers, rows, cls='turns')}</div>"
        )
    if dialogue is None:
        parts.append('<p class="note">Dialogue text not given: labels only.</p>')
    return "".join(parts) + "</article>"


def failed_goals_html(
    goals: Sequence[Record], dialogues: Mapping[str, Record] | None, cap: int
) -> str:
    """The failed-goal table and, after it, a drill-down of each of their dialogues.

    Args:
        goals: The lines of the GSR run's ``goals.jsonl``.
        dialogues: The dialogue records by id, for the user messages and the drill-downs'
            text (optional: without them the drill-downs show labels only).
        cap: At most this many failed goals are listed and drilled into; a note says how
            many more there are.

    Returns:
        The HTML of the table (or a note that no goal failed) and the drill-downs.
    """
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
