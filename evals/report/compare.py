"""The sections of ``compare.html``: two ``todeval evaluate`` runs side by side.

They read the payload of ``compare.json`` (``cli/compare.py`` ``compare_runs``): per metric each
run's figure with its bootstrap interval, the paired difference ``B - A`` with its interval and
verdict, and the records that changed most; the records in one run only; both runs' judges and
settings. Fractions are shown as percentages and their differences in percentage points.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from evals.report.page import MISSING, Section, as_number, num_html, pct_html, table, value_html

NOT_FRACTIONS = frozenset({"dte"})
"""Metrics that are counts (DTE: dialogue turns), shown as numbers rather than percentages."""
MAX_LISTED_IDS = 200
"""Record ids listed per run in "records in one run only" (the rest are in compare.json)."""

_BADGES = {"better": "ok", "worse": "bad", "no clear change": "muted"}


def _value(name: str, value: Any) -> str:
    return num_html(value) if name in NOT_FRACTIONS else pct_html(value)


def _signed(name: str, value: Any) -> str:
    number = as_number(value)
    if number is None:
        return value_html(MISSING)
    return escape(f"{number:+.2f}" if name in NOT_FRACTIONS else f"{number * 100:+.1f} pp")


def _ci(name: str, low: Any, high: Any, signed: bool = False) -> str:
    if low is None or high is None:
        return ""
    cell = _signed if signed else _value
    return f' <span class="muted">[{cell(name, low)}, {cell(name, high)}]</span>'


def _metric_row(name: str, figures: Mapping[str, Any]) -> list[str]:
    a, b, diff = figures["a"], figures["b"], figures["difference"]
    change = str(figures["change"])
    direction = figures.get("higher_is_better")
    label = figures["label"] + (
        "" if direction is None else " (higher is better)" if direction else " (lower is better)"
    )
    return [
        escape(label),
        _value(name, a["value"]) + _ci(name, a["low"], a["high"]),
        _value(name, b["value"]) + _ci(name, b["low"], b["high"]),
        _signed(name, diff["delta"]) + _ci(name, diff["low"], diff["high"], signed=True),
        f'<span class="badge {_BADGES.get(change, "warn")}">{escape(change)}</span>',
        escape(f"{a['n']} / {b['n']} / {diff['n']}"),
    ]


def _metrics_section(comparison: Mapping[str, Any]) -> Section:
    metrics: Mapping[str, Any] = comparison["metrics"]
    changes = [str(f["change"]) for f in metrics.values()]
    boot = comparison["bootstrap"]
    headers = ["metric", "A [95% CI]", "B [95% CI]", "B − A [95% CI]", "change", "n A / B / both"]
    body = (
        f'<p class="note">Each run\'s figure over all its records, with a percentile bootstrap '
        f"interval ({escape(str(boot['resamples']))} resamples, seed {escape(str(boot['seed']))})."
        f" B − A is paired: both runs recomputed on the same resampled records; "
        f"{escape(boot['pairing'])}. A change is better or worse only when its interval "
        "excludes 0.</p>" + table(headers, [_metric_row(n, f) for n, f in metrics.items()])
    )
    overview = [
        ("records in both runs", str(comparison["records"]["both"])),
        ("better", str(changes.count("better"))),
        ("worse", str(changes.count("worse"))),
        ("no clear change", str(changes.count("no clear change"))),
    ]
    return Section("compare-metrics", "Metrics: A and B", overview, body)


def _changed_section(comparison: Mapping[str, Any]) -> Section:
    parts, listed = [], 0
    for name, figures in comparison["metrics"].items():
        rows = [
            [
                escape(str(c["record_id"])),
                _value(name, c["a"]),
                _value(name, c["b"]),
                _signed(name, c["change"]),
            ]
            for c in figures["most_changed"]
        ]
        listed += len(rows)
        parts.append(f"<h3>{escape(figures['label'])}</h3>")
        parts.append(
            table(["record", "A", "B", "B − A"], rows)
            if rows
            else '<p class="note">No record changed.</p>'
        )
    note = (
        '<p class="note">Per record, its own value (its numerator over its denominator) in '
        "each run, largest change first; records both runs scored.</p>"
    )
    return Section(
        "compare-changed",
        "Records that changed most",
        [("records listed", str(listed))],
        note + "".join(parts),
    )


def _ids_html(ids: Sequence[Any]) -> str:
    if not ids:
        return '<p class="note">None.</p>'
    shown = ", ".join(escape(str(i)) for i in ids[:MAX_LISTED_IDS])
    more = len(ids) - MAX_LISTED_IDS
    rest = f' <span class="muted">and {more} more (compare.json)</span>' if more > 0 else ""
    return f'<p class="msg">{shown}{rest}</p>'


def _one_side_section(comparison: Mapping[str, Any]) -> Section:
    records = comparison["records"]
    only_a, only_b = records["only_a"], records["only_b"]
    body = (
        '<p class="note">Records one run has and the other lacks are left out of every '
        "difference.</p>"
        f"<h3>Only in A ({len(only_a)})</h3>{_ids_html(only_a)}"
        f"<h3>Only in B ({len(only_b)})</h3>{_ids_html(only_b)}"
    )
    overview = [("only in A", str(len(only_a))), ("only in B", str(len(only_b)))]
    return Section("compare-one-side", "Records in one run only", overview, body)


def _setting(value: Any) -> str:
    if value is None:
        return value_html(MISSING)
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return escape(text)


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
) -> tuple[list[list[str]], int]:
    """Rows ``setting | A | B`` (all, or only those that differ) and how many differ."""
    rows, differing = [], 0
    for key in [*a, *(k for k in b if k not in a)]:
        differs = a.get(key) != b.get(key)
        differing += differs
        if all_rows or differs:
            mark = ' <span class="badge warn">differs</span>' if differs else ""
            rows.append([escape(key) + mark, _setting(a.get(key)), _setting(b.get(key))])
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
    note = f'<p class="note">{escape("; ".join(notes))}</p>' if notes else ""
    status = [
        [escape("records by status"), _setting(run_a.get("status")), _setting(run_b.get("status"))]
    ]
    body = (
        note
        + '<p class="note">Judges as each run\'s summary.json lists them, then the run settings '
        "(summary.json run.context) that differ.</p>"
        + table(["setting", "A", "B"], status + judges + context)
    )
    return Section(
        "compare-judges",
        "Judges and settings",
        [("judges that differ", str(judges_differ)), ("settings that differ", str(context_differ))],
        body,
    )


def compare_sections(comparison: Mapping[str, Any]) -> list[Section]:
    """The page's sections, in order: metrics, records changed most, one run only, judges.

    Args:
        comparison: The ``compare.json`` payload.

    Returns:
        Sections for :func:`evals.report.page.write_report`.
    """
    return [
        _metrics_section(comparison),
        _changed_section(comparison),
        _one_side_section(comparison),
        _judges_section(comparison),
    ]
