"""Goal timelines of the goal-tracking section: a Gantt-like chart of each dialogue's goals.

One row per tracked goal, x = utterance index, a coloured segment per status stretch (from
``status_history``, else the per-turn ``goal_states``); ``not_mentioned`` is a gap. A dashed
arrow runs from a prerequisite's completion to each goal that depends on it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from markupsafe import Markup

from todeval.evals.goal_tracking_schema import TRACKED_STATUSES, normalise_status
from todeval.evals.metrics.goal_tracking.task_completion import dgcr, turns_to_completion
from todeval.evals.report.page import MISSING, anchor_id, fmt_num, fmt_pct, shorten
from todeval.evals.report.svg import clip_label, legend, svg_text
from todeval.evals.report.svg_shapes import Group, Line, Polygon, Rect, Shape, svg_document

#: Id of the goal-tracking section; the ids of its timelines start with it.
SECTION_ID = "goal-tracking"
Record = Mapping[str, Any]
STATUS_COLORS: dict[str, str] = {
    "open": "#3b6fb6",
    "pending": "#e0a02b",
    "completed": "#4f9a4a",
    "failed": "#c44e4b",
    "abandoned": "#8d8f94",
}
"""Segment colour of each status a goal in memory can have."""
_OTHER = "#cfcfcf"  # a status outside the schema
_WIDTH, _LABEL_W, _STATUS_W = 920, 280, 90
_ROW, _BAR, _AXIS = 32, 16, 22
_LABEL_CHARS = 40  # of a row label, at about 6.6 px a character


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    return int(value) if isinstance(value, str) and value.strip().isdigit() else None


def _status(value: Any) -> str:
    return str(normalise_status(value)) if value is not None else "not_mentioned"


def status_history(goal: Record, turns: Sequence[Record]) -> list[tuple[int, str]]:
    """A goal's ``(utterance, status)`` changes, sorted, from its history or the turn states.

    Entries without an integer turn are dropped; of several at one utterance the last counts
    (a goal raised and settled in one utterance); repeats of the same status are merged.
    """
    raw = [(_int(e.get("turn")), e.get("status")) for e in goal.get("status_history") or []]
    if not raw:  # no history: read the goal's state after each utterance
        goal_id = str(goal.get("goal_id"))
        raw = [(_int(t.get("turn")), (t.get("goal_states") or {}).get(goal_id)) for t in turns]
    at: dict[int, str] = {}
    for turn, status in sorted(((t, s) for t, s in raw if t is not None), key=lambda e: e[0]):
        at[turn] = _status(status)
    history: list[tuple[int, str]] = []
    for turn, status in at.items():
        if not history or history[-1][1] != status:
            history.append((turn, status))
    return history


def segments(history: Sequence[tuple[int, str]], last_turn: int) -> list[tuple[int, int, str]]:
    """``(first, last, status)`` stretches (inclusive) up to ``last_turn``, without gaps."""
    spans = []
    for i, (turn, status) in enumerate(history):
        end = history[i + 1][0] - 1 if i + 1 < len(history) else last_turn
        if status != "not_mentioned" and end >= turn:
            spans.append((turn, end, status))
    return spans


def _ticks(last_turn: int) -> list[int]:
    step = next(s for s in (1, 2, 5, 10, 20, 25, 50, 100, 200, 500) if last_turn / s <= 15)
    return [1, *range(step, last_turn + 1, step)] if step > 1 else list(range(1, last_turn + 1))


def _label(goal: Record) -> tuple[str, str]:
    """The row label (id, service and intent, else description) and its full tooltip."""
    goal_id = str(goal.get("goal_id"))
    names = [str(goal[k]) for k in ("service", "intent") if goal.get(k)]
    names = names or [shorten(goal.get("description"), 60)]
    label = " · ".join(part for part in (goal_id, *names) if part)
    slots = goal.get("slots")
    slot_text = ", ".join(f"{k}={v}" for k, v in slots.items()) if isinstance(slots, dict) else ""
    tip = " — ".join(p for p in (label, shorten(goal.get("description"), 300), slot_text) if p)
    return label, tip


def _row_label(goal: Record, top: float, deps: Sequence[str]) -> Group:
    """The label left of a row, with ``depends on …`` under it when the goal has prerequisites."""
    label, tip = _label(goal)
    first = svg_text(
        _LABEL_W - 8, top + (9 if deps else _ROW / 2), clip_label(label, _LABEL_CHARS), anchor="end"
    )
    second = clip_label("depends on " + ", ".join(deps), _LABEL_CHARS)
    lines = [first, svg_text(_LABEL_W - 8, top + 23, second, anchor="end", cls="na")]
    return Group(lines if deps else lines[:1], title=tip)


def _arrow(x: float, y_from: float, y_to: float, tip: str) -> Group:
    head = 5 if y_to > y_from else -5
    shaft = Line(x, y_from, x, y_to - head, "#444", width=1.2, dash="3 2")
    tip_of = Polygon([(x - 4, y_to - head), (x + 4, y_to - head), (x, y_to)], "#444")
    return Group([shaft, tip_of], title=tip, cls="dependency")


def timeline_svg(dialogue: Record) -> Markup:
    """The Gantt-like chart of one dialogue's goals (see the module notes)."""
    goals, turns = list(dialogue.get("goals") or []), list(dialogue.get("turns") or [])
    histories = [status_history(goal, turns) for goal in goals]
    last_turn = max([1, *(_int(t.get("turn")) or 1 for t in turns),
                     *(turn for h in histories for turn, _ in h)])  # fmt: skip
    cell = (_WIDTH - _LABEL_W - _STATUS_W - 10) / last_turn
    height = _AXIS + len(goals) * _ROW + 4

    def x_of(turn: int) -> float:
        return _LABEL_W + (turn - 1) * cell

    parts: list[Shape] = []
    for tick in _ticks(last_turn):
        parts.append(Line(x_of(tick), _AXIS - 4, x_of(tick), height - 4, "#e8e8e8"))
        parts.append(svg_text(x_of(tick) + cell / 2, _AXIS / 2 - 1, str(tick), anchor="middle"))
    rows = {str(goal.get("goal_id")): i for i, goal in enumerate(goals)}
    for i, (goal, history) in enumerate(zip(goals, histories, strict=True)):
        top, goal_id = _AXIS + i * _ROW, str(goal.get("goal_id"))
        deps = [str(d) for d in goal.get("dependencies") or [] if str(d) != goal_id]
        parts.append(_row_label(goal, top, deps))
        for first, last, status in segments(history, last_turn):
            where = f"utterance {first}" if first == last else f"utterances {first}–{last}"
            parts.append(
                Rect(x_of(first), top + (_ROW - _BAR) / 2, (last - first + 1) * cell, _BAR,
                     STATUS_COLORS.get(status, _OTHER), title=f"{goal_id} {status}: {where}",
                     cls="seg", status=status)
            )  # fmt: skip
        final = _status(goal.get("status")) if goal.get("status") is not None else MISSING
        right = _WIDTH - _STATUS_W + 4
        parts.append(svg_text(right, top + _ROW / 2, final))
        for dep in (d for d in deps if d in rows):
            done = next((t for t, s in histories[rows[dep]] if s == "completed"), None)
            if done is not None:
                y_dep = _AXIS + rows[dep] * _ROW + _ROW / 2
                y_to = top + (_ROW - _BAR) / 2 if rows[dep] < i else top + (_ROW + _BAR) / 2
                note = f"{goal_id} depends on {dep}, completed at utterance {done}"
                parts.append(_arrow(x_of(done) + cell / 2, y_dep, y_to, note))
    title = f"Goal timeline of dialogue {dialogue.get('dialogue_id')}"
    return svg_document(parts, title=title, width=_WIDTH, height=height)


def status_legend(extra: bool = False) -> Markup:
    """The status colours as a small SVG (with ``other`` when a status outside them occurs)."""
    names = [*TRACKED_STATUSES, *(["other"] if extra else [])]
    colors = [STATUS_COLORS.get(name, _OTHER) for name in names]
    return svg_document(legend(names, colors), title="Goal status colours", width=520, height=22)


def _facts(dialogue: Record, figures: Record) -> list[tuple[str, str]]:
    """``(label, figure)`` pairs: goals, dGCR and NTC of the memory, detection and status."""
    goals = [g for g in dialogue.get("goals") or [] if isinstance(g, Mapping)]
    statuses = {str(g.get("goal_id")): g.get("status") for g in goals}
    prerequisites = {str(g.get("goal_id")): list(g.get("dependencies") or []) for g in goals}
    try:  # the metrics' own reading; a malformed history leaves NTC blank
        ntc = turns_to_completion(goals)
    except (KeyError, TypeError, ValueError):
        ntc = None
    facts = [
        (f"{len(goals)} goal{'' if len(goals) == 1 else 's'}", ""),
        ("dGCR", fmt_pct(dgcr(statuses, prerequisites))),
        ("NTC", fmt_num(ntc)),
    ]
    return facts + [
        (name, fmt_pct(figures.get(key)))
        for name, key in (("detection F1", "goal_detection_f1"), ("status acc.", "status_accuracy"))
        if key in figures
    ]


def _article(dialogue: Record, figures: Record, aid: str) -> dict[str, Any]:
    goals, gold = dialogue.get("goals") or [], dialogue.get("gold")
    if isinstance(gold, Mapping):  # gold ids name the annotated goals, not the rows above
        finals = ", ".join(f"{goal_id} {_status(status)}" for goal_id, status in gold.items())
        plural = "" if len(gold) == 1 else "s"
        gold_note = f"Gold final statuses ({len(gold)} annotated goal{plural}): {finals}."
    else:
        gold_note = "No gold annotations."
    return {
        "anchor": aid,
        "dialogue_id": str(dialogue.get("dialogue_id")),
        "facts": _facts(dialogue, figures),
        "svg": timeline_svg(dialogue) if goals else None,
        "gold_note": gold_note,
    }


def timelines(dialogues: Sequence[Record], figures: Mapping[str, Record], cap: int) -> Any:
    """The legend, a timeline per dialogue (at most ``cap``) and how many are left out."""
    shown = list(dialogues[: max(cap, 0)])
    statuses = {
        status
        for d in shown
        for goal in d.get("goals") or []
        for _, status in status_history(goal, d.get("turns") or [])
    }
    articles, seen = [], set[str]()
    for i, dialogue in enumerate(shown):
        did = str(dialogue.get("dialogue_id"))
        aid = anchor_id(f"{SECTION_ID}-d", did)
        aid = anchor_id(f"{SECTION_ID}-d", f"{did}#{i}") if aid in seen else aid
        seen.add(aid)
        articles.append(_article(dialogue, figures.get(did) or {}, aid))
    return {
        "count": len(dialogues),
        "legend": status_legend(bool(statuses - {*STATUS_COLORS, "not_mentioned"})),
        "articles": articles,
        "hidden": len(dialogues) - len(shown),
        "cap": cap,
    }
