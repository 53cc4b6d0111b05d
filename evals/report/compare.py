"""The sections of ``compare.html``: two ``todeval evaluate`` runs side by side.

They read ``compare.json`` (:func:`evals.metrics.compare.compare_runs`). Fractions are shown as
percentages, differences in percentage points. :func:`text_table` gives the same figures as
plain text for ``todeval compare``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from todeval.evals.outputs import fmt_figure
from todeval.evals.report.page import MISSING, Section, as_number, fmt_num, fmt_pct, write_report
from todeval.evals.report.templating import render
from todeval.evals.report.validity import floor_basis, floor_text

NOT_FRACTIONS = frozenset({"dte", "proactive_plan_score", "proactive_guidance_score"})
"""Metrics that are counts (DTE: dialogue turns), shown as numbers rather than percentages."""
MAX_LISTED_IDS = 200
"""Record ids listed per run in "records in one run only" (the rest are in compare.json)."""

_BADGES = {"better": "ok", "worse": "bad", "no clear change": "muted"}


def _value(name: str, value: Any) -> str:
    return fmt_num(value) if name in NOT_FRACTIONS else fmt_pct(value)


def _signed(name: str, value: Any) -> str:
    number = as_number(value)
    if number is None:
        return MISSING
    return f"{number:+.2f}" if name in NOT_FRACTIONS else f"{number * 100:+.1f} pp"


def _figure(name: str, value: Any, low: Any, high: Any, signed: bool = False) -> dict[str, Any]:
    """A figure and its interval (None when either end is missing), as text."""
    text = _signed if signed else _value
    ci = None if low is None or high is None else (text(name, low), text(name, high))
    return {"value": text(name, value), "ci": ci}


def _metric_row(name: str, figures: Mapping[str, Any]) -> dict[str, Any]:
    a, b, diff = figures["a"], figures["b"], figures["difference"]
    change = str(figures["change"])
    direction = figures.get("higher_is_better")
    label = figures["label"] + (
        "" if direction is None else " (higher is better)" if direction else " (lower is better)"
    )
    return {
        "label": label,
        "figures": [
            _figure(name, a["value"], a["low"], a["high"]),
            _figure(name, b["value"], b["low"], b["high"]),
            _figure(name, diff["delta"], diff["low"], diff["high"], signed=True),
        ],
        "change": change,
        "badge": _BADGES.get(change, "warn"),
        "n": f"{a['n']} / {b['n']} / {diff['n']}",
        "floor": floor_text(figures.get("floor"), fraction=name not in NOT_FRACTIONS),
    }


def _metrics_section(comparison: Mapping[str, Any]) -> Section:
    metrics: Mapping[str, Any] = comparison["metrics"]
    changes = [str(f["change"]) for f in metrics.values()]
    body = render(
        "compare_metrics.html.j2",
        bootstrap=comparison["bootstrap"],
        rows=[_metric_row(n, f) for n, f in metrics.items()],
        floors=floor_basis({n: f.get("floor") for n, f in metrics.items() if f.get("floor")}),
    )
    overview = [
        ("records in both runs", str(comparison["records"]["both"])),
        ("better", str(changes.count("better"))),
        ("worse", str(changes.count("worse"))),
        ("no clear change", str(changes.count("no clear change"))),
    ]
    return Section("compare-metrics", "Metrics: A and B", overview, body)


def _changed_section(comparison: Mapping[str, Any]) -> Section:
    metrics = [
        (str(figures["label"]),
         [[str(c["record_id"]), _value(name, c["a"]), _value(name, c["b"]),
           _signed(name, c["change"])] for c in figures["most_changed"]])
        for name, figures in comparison["metrics"].items()
    ]  # fmt: skip
    listed = sum(len(rows) for _, rows in metrics)
    return Section(
        "compare-changed",
        "Records that changed most",
        [("records listed", str(listed))],
        render("compare_changed.html.j2", metrics=metrics),
    )


def _ids(ids: Sequence[Any]) -> dict[str, Any]:
    return {"shown": [str(i) for i in ids[:MAX_LISTED_IDS]], "more": len(ids) - MAX_LISTED_IDS}


def _one_side_section(comparison: Mapping[str, Any]) -> Section:
    records = comparison["records"]
    only_a, only_b = records["only_a"], records["only_b"]
    body = render(
        "compare_one_side.html.j2",
        sides=[("A", len(only_a), _ids(only_a)), ("B", len(only_b), _ids(only_b))],
    )
    overview = [("only in A", str(len(only_a))), ("only in B", str(len(only_b)))]
    return Section("compare-one-side", "Records in one run only", overview, body)


def _setting(value: Any) -> str:
    if value is None:
        return MISSING
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _flat(settings: Any, prefix: str) -> dict[str, Any]:
    """Nested settings (``judges: {suite: {role: spec}}``) as ``{"prefix.suite.role": spec}``."""
    if not isinstance(settings, Mapping):
        return {} if settings is None else {prefix.rstrip("."): settings}
    flat: dict[str, Any] = {}
    for key, value in settings.items():
        if isinstance(value, Mapping) and value:
            flat |= _flat(value, f"{prefix}{key}.")
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def _settings_rows(
    a: Mapping[str, Any], b: Mapping[str, Any], *, all_rows: bool
) -> tuple[list[dict[str, Any]], int]:
    """Rows ``setting | A | B`` (all, or only those that differ) and how many differ."""
    rows, differing = [], 0
    for key in [*a, *(k for k in b if k not in a)]:
        differs = a.get(key) != b.get(key)
        differing += differs
        if all_rows or differs:
            rows.append(
                {"key": key, "differs": differs, "a": _setting(a.get(key)),
                 "b": _setting(b.get(key))}
            )  # fmt: skip
    return rows, differing


def _judges_section(comparison: Mapping[str, Any]) -> Section:
    run_a, run_b = comparison["runs"]["a"], comparison["runs"]["b"]
    judges, judges_differ = _settings_rows(
        _flat(run_a.get("judges"), "judges."), _flat(run_b.get("judges"), "judges."), all_rows=True
    )
    context, context_differ = _settings_rows(
        _flat(run_a.get("context"), ""), _flat(run_b.get("context"), ""), all_rows=False
    )
    notes = [
        f"{side}: {run['summary_error']}"
        for side, run in (("A", run_a), ("B", run_b))
        if run.get("summary_error")
    ]
    status = {"key": "records by status", "differs": False, "a": _setting(run_a.get("status")),
              "b": _setting(run_b.get("status"))}  # fmt: skip
    body = render("compare_judges.html.j2", note="; ".join(notes), rows=[status, *judges, *context])
    return Section(
        "compare-judges",
        "Judges and settings",
        [("judges that differ", str(judges_differ)), ("settings that differ", str(context_differ))],
        body,
    )


def compare_sections(comparison: Mapping[str, Any]) -> list[Section]:
    """The page's sections, in order: metrics, records changed most, one run only, judges."""
    return [
        _metrics_section(comparison),
        _changed_section(comparison),
        _one_side_section(comparison),
        _judges_section(comparison),
    ]


def write_compare_page(path: Path, comparison: Mapping[str, Any]) -> None:
    """Write ``compare.html``: :func:`compare_sections` with the runs and the bootstrap as meta."""
    runs, bootstrap = comparison["runs"], comparison["bootstrap"]
    write_report(
        path,
        "todeval compare",
        compare_sections(comparison),
        meta={
            "A": str(runs["a"]["dir"]),
            "B": str(runs["b"]["dir"]),
            "bootstrap": f"{bootstrap['resamples']} resamples, seed {bootstrap['seed']}, "
            f"percentile 95% intervals; differences paired ({bootstrap['pairing']})",
        },
    )


def _with_ci(value: float | None, low: float | None, high: float | None, signed: bool) -> str:
    def fmt(x: float | None) -> str:
        return fmt_figure(x) if x is None or not signed else f"{x:+.3f}"

    return fmt(value) if value is None else f"{fmt(value)} [{fmt(low)}, {fmt(high)}]"


def text_table(comparison: Mapping[str, Any]) -> str:
    """The comparison as aligned plain text: one row per metric."""
    rows = [["metric", "A [95% CI]", "B [95% CI]", "B - A [95% CI]", "change", "MDD", "n A/B/both"]]
    floors = any(f.get("floor") for f in comparison["metrics"].values())
    if floors:
        rows[0].append("do-nothing floor")
    for name, figures in comparison["metrics"].items():
        a, b, d = figures["a"], figures["b"], figures["difference"]
        rows.append(
            [
                figures["label"],
                _with_ci(a["value"], a["low"], a["high"], signed=False),
                _with_ci(b["value"], b["low"], b["high"], signed=False),
                _with_ci(d["delta"], d["low"], d["high"], signed=True),
                _change(figures),
                _mdd(figures.get("minimum_detectable_difference")),
                f"{a['n']}/{b['n']}/{d['n']}",
                *([_floor_cell(name, figures.get("floor"))] if floors else []),
            ]
        )
    if len(rows) == 1:
        return "no metrics in either run's results.jsonl"
    notes = [
        "MDD: the smallest difference these records can show (95 %, power 0.8); a smaller one "
        "is within noise."
    ]
    if floors:
        notes.append(
            "do-nothing floor: the highest value any floor agent reached with the same judges "
            "(make floors); a figure near it is about as good as doing nothing."
        )
    if comparison.get("judges_differ"):
        notes.insert(
            0, "judges differ between the runs: a change may be the judges', not the agent's"
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    table = "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in rows
    )
    return "\n".join([table, *notes])


def _floor_cell(name: str, floor: Mapping[str, Any] | None) -> str:
    if not floor:
        return ""
    value = floor.get("value")
    if value is None:
        return "n/a"
    return f"{value:.2f}" if name in NOT_FRACTIONS else f"{value:.3f}"


def _change(figures: Mapping[str, Any]) -> str:
    change = str(figures["change"])
    return "within noise" if change == "no clear change" and figures.get("within_noise") else change


def _mdd(value: float | None) -> str:
    return "n/a" if value is None else f"±{value:.3f}"
