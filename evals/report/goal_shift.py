"""The goal-shift section of the report (AgentChangeBench, paper 002: Tables 7, 9, 10, Fig. 2).

Headline figures, pooled figures beside macro averages, Table 10-style tables per domain and
persona, box plots of the TUE components (Fig. 2) and GSRT per shift. Drawn by
``goal_shift.html.j2``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from statistics import fmean, quantiles
from typing import Any

from markupsafe import Markup

from todeval.evals.metrics.goal_shift.suite import GoalShiftSuite
from todeval.evals.report.page import Section, fmt_num, fmt_pct
from todeval.evals.report.svg import nice_ticks, svg_text
from todeval.evals.report.svg_shapes import Circle, Line, Rect, Shape, svg_document
from todeval.evals.report.templating import render
from todeval.evals.report.validity import floor_basis, floor_text

SECTION_ID = "goal-shift"
MAX_SHIFT_ROWS = 300
"""Shifts listed in the per-shift table (the rest are in conversations.jsonl)."""

Row = Mapping[str, Any]


Cell = str | list[str]
"""A table cell: text, or figures and separators written one after the other."""


def _pct2(value: Any) -> str:
    return fmt_pct(value, 2)


def _joined(source: Row, keys: Sequence[str], fmt: Callable[[Any], str]) -> list[str]:
    parts = [fmt(source.get(key)) for key in keys]
    return [part for i, text in enumerate(parts) for part in ([" / "] if i else []) + [text]]


def _table10_row(label: str, s: Row) -> list[Cell]:
    channels, gsrt = s.get("tsr_channels") or {}, s.get("gsrt") or {}
    tue_parts = _joined(s, ("tool_correctness", "param_validity"), _pct2)
    tcrr_parts = _joined(s, ("tcrr_window", "tcrr_batch"), _pct2)
    return [
        label,
        str(s.get("conversations", "")),
        _pct2(s.get("tsr")),
        _joined(channels, ("communicate_info", "action", "nl_assertion"), fmt_pct),
        [_pct2(s.get("tue")), " (", *tue_parts, ")"],
        [_pct2(s.get("tcrr")), " (", *tcrr_parts, ")"],
        f"{s.get('num_redundant', 0)}/{s.get('num_tool_calls', 0)}",
        [str(gsrt.get("shifts", 0)), " / ",
         *_joined(gsrt, ("recovery_rate", "transfer_rate"), fmt_pct)],
        _joined(gsrt, ("median_ack", "median_tool", "median_outcome"), lambda v: fmt_num(v, 1)),
    ]  # fmt: skip


def _group_rows(summary: Row, key: str) -> list[list[Cell]]:
    return [_table10_row(name, group) for name, group in (summary.get(key) or {}).items()]


def _macro_row(label: str, groups: str, s: Row) -> list[Cell]:
    channels, gsrt = s.get("tsr_channels") or {}, s.get("gsrt") or {}
    return [
        label,
        groups,
        _pct2(s.get("tsr")),
        _joined(channels, ("communicate_info", "action", "nl_assertion"), fmt_pct),
        [_pct2(s.get("tue")), " (", *_joined(s, ("tool_correctness", "param_validity"), _pct2),
         ")"],
        [_pct2(s.get("tcrr")), " (", *_joined(s, ("tcrr_window", "tcrr_batch"), _pct2), ")"],
        _joined(gsrt, ("recovery_rate", "transfer_rate"), fmt_pct),
        _joined(gsrt, ("median_ack", "median_tool", "median_outcome"), lambda v: fmt_num(v, 1)),
    ]  # fmt: skip


def pooled_macro_rows(summary: Row) -> list[list[Cell]]:
    """The pooled figures, then each breakdown's macro average (paper 002, Section 4.3)."""
    rows = [_macro_row("pooled (every call, shift, conversation)", "-", summary)]
    for name, macro in (summary.get("macro") or {}).items():
        label = f"macro over {name.removeprefix('by_').replace('_', ' ')}s"
        rows.append(_macro_row(label, str(macro.get("groups", "")), macro))
    return rows


_MACRO_HEADERS = [
    "averaged",
    "groups",
    "TSR",
    "CI / actions / NL",
    "TUE (TC / PA)",
    "TCRR (W / B)",
    "GSRT recovery / transfer",
    "median turns ack / tool / outcome",
]

_TABLE10_HEADERS = [
    "group",
    "conversations",
    "TSR",
    "CI / actions / NL",
    "TUE (TC / PA)",
    "TCRR (W / B)",
    "redundant / calls",
    "GSRT shifts / recovery / transfer",
    "median turns ack / tool / outcome",
]


def box_plot(
    groups: Sequence[tuple[str, Sequence[float]]],
    *,
    title: str,
    thresholds: Sequence[tuple[float, str]] = (),
    domain: tuple[float, float] = (0.0, 1.02),
    width: int = 680,
) -> Markup:
    """Horizontal box plots (whiskers at 1.5 IQR, outliers as dots) as inline ``<svg>``.

    A group without values is drawn as ``n/a``; ``thresholds`` are dotted vertical lines.
    """
    lo, hi = domain
    left = max((len(label) for label, _ in groups), default=4) * 6.6 + 16
    right, row_h, top = width - 16, 34, 8
    bottom = top + row_h * max(len(groups), 1)

    def px(value: float) -> float:
        clipped = min(max(value, lo), hi)
        return left + (clipped - lo) / (hi - lo) * (right - left)

    parts: list[Shape] = []
    for tick in [t for t in nice_ticks(lo, min(hi, 1.0)) if lo <= t <= hi]:
        x = px(tick)
        parts.append(Line(x, top, x, bottom, "#eee"))
        parts.append(svg_text(x, bottom + 12, f"{tick:g}", anchor="middle"))
    for value, colour in thresholds:
        x = px(value)
        parts.append(Line(x, top, x, bottom, colour, width=1.5, dash="3,3"))
    for i, (label, values) in enumerate(groups):
        mid = top + row_h * i + row_h / 2
        parts.append(svg_text(left - 6, mid, label, anchor="end"))
        parts.extend(_box(sorted(values), mid, px))
    return svg_document(parts, title=title, width=width, height=bottom + 24)


def _box(values: list[float], mid: float, px: Callable[[float], float]) -> list[Shape]:
    if not values:
        return [svg_text(px(0.5), mid, "n/a", anchor="middle", cls="na")]
    q1, median, q3 = (
        quantiles(values, n=4, method="inclusive") if len(values) > 1 else [values[0]] * 3
    )
    reach = 1.5 * (q3 - q1)
    inside = [v for v in values if q1 - reach <= v <= q3 + reach]
    low, high = min(inside), max(inside)
    tip = (
        f"n={len(values)} min={values[0]:.3f} q1={q1:.3f} median={median:.3f} "
        f"q3={q3:.3f} max={values[-1]:.3f} mean={fmean(values):.3f}"
    )
    h = 10
    parts: list[Shape] = [
        Line(px(low), mid, px(high), mid, "#555"),
        Rect(px(q1), mid - h, max(px(q3) - px(q1), 1), 2 * h, "#f4a6a0", title=tip, stroke="#555"),
        Line(px(median), mid - h, px(median), mid + h, "#222", width=2),
    ]
    parts += [
        Circle(px(v), mid, 2.5, "#c44e4b", title=f"{v:.3f}") for v in values if v not in inside
    ]
    return parts


def tue_components(rows: Sequence[Row]) -> list[tuple[str, list[float]]]:
    """Fig. 2's three boxes: T per conversation, P per conversation, T per task (mean)."""

    def values(key: str) -> list[float]:
        return [float(row[key]) for row in rows if row.get(key) is not None]

    by_task: dict[str, list[float]] = defaultdict(list)
    for row in rows:
        if row.get("tool_correctness") is not None:
            by_task[str(row["task_id"])].append(float(row["tool_correctness"]))
    return [
        ("TC per conversation", values("tool_correctness")),
        ("PV per conversation", values("param_validity")),
        ("TC per task", [fmean(v) for v in by_task.values()]),
    ]


def _shift_rows(rows: Sequence[Row]) -> list[dict[str, Any]]:
    return [
        {"task": str(row["task_id"]), "turn": str(shift["turn"]),
         "goals": f"{shift.get('from_goal')} → {shift.get('to_goal')}",
         "turns": [fmt_num(shift.get(k)) for k in ("ack", "tool", "outcome")],
         "transfer": "yes" if shift.get("transferred_to_human") else "no",
         "recovered": bool(shift.get("recovered"))}
        for row in rows
        for shift in row.get("shifts") or []
    ]  # fmt: skip


_UPSTREAM_NOTE = "AgentChangeBench's code (TCRR pooled across conversations by turn number)"
_DEFAULT_NOTE = "per conversation (TCRR window of 3 assistant turns, batch threshold 2)"
FLOOR_FIGURES: dict[str, tuple[str, tuple[str, ...]]] = {
    "tsr": ("TSR", ("tsr",)),
    "communicate_info": ("TSR channel: communicate info", ("tsr_channels", "communicate_info")),
    "action": ("TSR channel: action", ("tsr_channels", "action")),
    "nl_assertion": ("TSR channel: NL assertions", ("tsr_channels", "nl_assertion")),
    "tue": ("TUE", ("tue",)),
    "gsrt_recovery": ("goal-shift recovery", ("gsrt", "recovery_rate")),
    "pass_hat_k": ("pass^1", ("pass_hat_k", "1")),
}
"""A floor's key -> the figure's label and where the run's value is in the summary."""

_SHIFT_HEADERS = ["task", "shift turn", "goals", "ack", "tool", "outcome", "transfer", "verdict"]


def _floor_rows(summary: Mapping[str, Any]) -> list[list[str]]:
    """Each figure with a floor: the run's value beside what do-nothing agents reach."""
    rows = []
    for key, floor in (summary.get("floors") or {}).items():
        label, path = FLOOR_FIGURES.get(key, (key, (key,)))
        value: Any = summary
        for step in path:
            value = value.get(step) if isinstance(value, Mapping) else None
        rows.append([label, fmt_pct(value), floor_text(floor)])
    return rows


def goal_shift_section(summary: Row, rows: Sequence[Row]) -> Section:
    """The report section of one goal-shift run (see the module docstring)."""
    gsrt = summary.get("gsrt") or {}
    overview = [
        ("TSR", fmt_pct(summary.get("tsr"))),
        ("TUE", fmt_pct(summary.get("tue"))),
        ("TCRR", fmt_pct(summary.get("tcrr"))),
        ("GSRT recovery", fmt_pct(gsrt.get("recovery_rate"))),
        ("pass^1", fmt_pct((summary.get("pass_hat_k") or {}).get("1"))),
    ]
    tsr_floor = (summary.get("floors") or {}).get("tsr")
    if tsr_floor:
        overview.append(("TSR do-nothing floor", fmt_pct(tsr_floor.get("value"))))
    mode = _UPSTREAM_NOTE if summary.get("compat") == "upstream" else _DEFAULT_NOTE
    judges = "; ".join(
        f"{role}: {', '.join(map(str, used)) if isinstance(used, list) else used}"
        for role, used in (summary.get("judges") or {}).items()
    )
    issues = summary.get("issues") or []
    body = render(
        "goal_shift.html.j2",
        mode=mode,
        judges=judges,
        floors=_floor_rows(summary),
        floor_basis=floor_basis(summary.get("floors") or {}),
        headers=_TABLE10_HEADERS,
        macro_headers=_MACRO_HEADERS,
        macro_rows=pooled_macro_rows(summary),
        tables=[
            ("Efficiency, redundancy and recovery (Table 10 layout)",
             [_table10_row("all", summary), *_group_rows(summary, "by_domain")]),
            ("By persona (Table 7)", _group_rows(summary, "by_persona")),
            ("By goal sequence", _group_rows(summary, "by_goal_sequence")),
        ],
        components=box_plot(
            tue_components(rows),
            title="TUE components",
            thresholds=[(0.7, "#e0892b"), (0.95, "#c44e4b")],
        ),
        shifts=str(gsrt.get("shifts", 0)),
        shift_headers=_SHIFT_HEADERS,
        shift_rows=_shift_rows(rows)[:MAX_SHIFT_ROWS],
        issues=[[str(i.get(key)) for key in ("dialogue_id", "field", "message")]
                for i in issues[:MAX_SHIFT_ROWS]],
        n_issues=len(issues),
        summary=summary,
    )  # fmt: skip
    return Section(SECTION_ID, "Goal-shift robustness (AgentChangeBench)", overview, body)


def goal_shift_evaluation_section(summary: Row, suite: GoalShiftSuite) -> Section:
    """Goal shift's section of the evaluation report."""
    return goal_shift_section(summary, suite.rows)
