"""Two ``todeval evaluate`` runs side by side: every figure with bootstrap intervals.

:func:`read_run` reads a run folder's ``results.jsonl`` (one line per record, streamed) and
``summary.json``; :func:`compare_runs` joins two runs by ``record_id``. Each run's figure gets a
percentile bootstrap interval over its own records; the difference ``B - A`` a paired bootstrap
over the records both runs have a part for (:mod:`evals.metrics.bootstrap`).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from todeval.evals.metrics.bootstrap import (
    Interval,
    bootstrap_interval,
    change_verdict,
    most_changed,
    paired_difference,
)
from todeval.evals.metrics.record_metrics import METRICS, Part
from todeval.evals.outputs import fmt_figure, write_json
from todeval.evals.report.compare import compare_sections
from todeval.evals.report.page import write_report

LEVEL = 0.95
PAIRING = "a record counts for a metric's difference only when both runs have its part"


class RunReadError(ValueError):
    """A run folder or one of its lines cannot be read (the message says where)."""


@dataclass
class RunRecords:
    """What one run's folder holds for a comparison."""

    folder: Path
    metrics: dict[str, dict[str, Part]] = field(default_factory=dict)
    """``record_id -> {metric: part}``, in the file's order."""
    status: Counter[str] = field(default_factory=Counter)
    summary: dict[str, Any] | None = None
    summary_error: str | None = None


def read_run(raw: str | Path) -> RunRecords:
    """A run folder's ``results.jsonl`` parts and ``summary.json`` (optional).

    Raises:
        RunReadError: The folder or its ``results.jsonl`` is missing or unreadable, or a line is
            malformed (the message names the file and line).
    """
    folder = Path(raw).expanduser()
    results = folder / "results.jsonl"
    if not folder.is_dir() or not results.is_file():
        raise RunReadError(f"{folder}: not a `todeval evaluate` output folder (no results.jsonl)")
    run = RunRecords(folder)
    first_line: dict[str, int] = {}
    try:
        with results.open(encoding="utf-8") as lines:
            for number, text in enumerate(lines, start=1):
                if not text.strip():
                    continue
                record_id, status, parts = _parse_line(text, f"{results}:{number}")
                if record_id in first_line:
                    raise RunReadError(
                        f"{results}:{number}: record {record_id!r} repeats line "
                        f"{first_line[record_id]}; records are joined by id"
                    )
                first_line[record_id] = number
                run.metrics[record_id] = parts
                run.status[status] += 1
    except (OSError, UnicodeDecodeError) as error:
        raise RunReadError(f"{results}: cannot read ({error})") from error
    run.summary, run.summary_error = _read_summary(folder / "summary.json")
    return run


def _parse_line(text: str, where: str) -> tuple[str, str, dict[str, Part]]:
    try:
        line = json.loads(text)
    except json.JSONDecodeError as error:
        raise RunReadError(f"{where}: not JSON ({error.msg} at column {error.colno})") from error
    if not isinstance(line, dict):
        raise RunReadError(f"{where}: expected a JSON object, got {type(line).__name__}")
    record_id = line.get("record_id")
    if not isinstance(record_id, str) or not record_id:
        raise RunReadError(f"{where}: record_id is missing or not a non-empty string")
    where = f"{where} (record {record_id!r})"
    metrics = line.get("metrics") or {}  # a failed record may carry no metrics
    if not isinstance(metrics, dict):
        raise RunReadError(f"{where}: metrics: expected an object {{name: {{num, den}}}}")
    parts: dict[str, Part] = {}
    for name, part in metrics.items():
        if not isinstance(part, dict):
            raise RunReadError(f"{where}: metrics.{name}: expected {{num, den}}")
        num, den = _number(part.get("num")), _number(part.get("den"))
        if num is None or den is None or den < 0:
            raise RunReadError(
                f"{where}: metrics.{name}: num and den must be finite numbers, den >= 0 "
                f"(got num={part.get('num')!r}, den={part.get('den')!r})"
            )
        parts[name] = {"num": num, "den": den}
    return record_id, str(line.get("status") or "unknown"), parts


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _read_summary(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """The run's summary, or why it is not there (the comparison does not need it)."""
    if not path.is_file():
        return None, "no summary.json"
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        return None, f"summary.json unreadable ({error})"
    if not isinstance(summary, dict):
        return None, "summary.json is not a JSON object"
    return summary, None


def _ordered_metrics(*runs: RunRecords) -> list[str]:
    """Known metrics in report order, then any others the runs carry, by name."""
    present = {name for run in runs for parts in run.metrics.values() for name in parts}
    return [n for n in METRICS if n in present] + sorted(present - METRICS.keys())


def _run_facts(run: RunRecords) -> dict[str, Any]:
    summary = run.summary or {}
    context = (summary.get("run") or {}).get("context")
    return {
        "dir": str(run.folder),
        "records": len(run.metrics),
        "status": dict(run.status),
        "judges": summary.get("judges"),
        "context": context if isinstance(context, dict) else None,
        "summary_error": run.summary_error,
    }


def compare_runs(
    run_a: RunRecords, run_b: RunRecords, *, resamples: int, seed: int, top: int
) -> dict[str, Any]:
    """Every figure of the comparison: the payload of ``compare.json`` (and of the page)."""
    shared = [rid for rid in run_a.metrics if rid in run_b.metrics]
    metrics: dict[str, Any] = {}
    for name in _ordered_metrics(run_a, run_b):
        info = METRICS.get(name)
        pairs: dict[str, tuple[Part, Part]] = {}
        one_side = {"a": 0, "b": 0}
        for rid in shared:
            part_a, part_b = run_a.metrics[rid].get(name), run_b.metrics[rid].get(name)
            if part_a is not None and part_b is not None:
                pairs[rid] = (part_a, part_b)
            elif part_a is not None or part_b is not None:
                one_side["a" if part_a is not None else "b"] += 1
        difference = paired_difference(
            list(pairs.values()), resamples=resamples, seed=seed, level=LEVEL
        )
        metrics[name] = {
            "label": info.label if info else name,
            "suite": info.suite if info else None,
            "higher_is_better": info.higher_is_better if info else None,
            "a": asdict(_interval(run_a, name, difference.n, difference.a, resamples, seed)),
            "b": asdict(_interval(run_b, name, difference.n, difference.b, resamples, seed)),
            "difference": asdict(difference),
            "change": change_verdict(difference, info.higher_is_better if info else None),
            "scored_by_one_run_only": one_side,
            "most_changed": [
                {"record_id": c.record_id, "a": c.value_a, "b": c.value_b, "change": c.change}
                for c in most_changed(pairs, top)
            ],
        }
    return {
        "runs": {"a": _run_facts(run_a), "b": _run_facts(run_b)},
        "bootstrap": {"resamples": resamples, "seed": seed, "level": LEVEL, "pairing": PAIRING},
        "records": {
            "both": len(shared),
            "only_a": [rid for rid in run_a.metrics if rid not in run_b.metrics],
            "only_b": [rid for rid in run_b.metrics if rid not in run_a.metrics],
        },
        "metrics": metrics,
    }


def _interval(
    run: RunRecords, name: str, paired_n: int, paired: Interval, resamples: int, seed: int
) -> Interval:
    """The run's figure over all its records with the part.

    When those are exactly the paired records, the paired resamples already bound it (one pass
    of resampling instead of three).
    """
    parts = [p[name] for p in run.metrics.values() if name in p]
    if len(parts) == paired_n:
        return paired
    return bootstrap_interval(parts, resamples=resamples, seed=seed, level=LEVEL)


def _with_ci(value: float | None, low: float | None, high: float | None, signed: bool) -> str:
    def fmt(x: float | None) -> str:
        return fmt_figure(x) if x is None or not signed else f"{x:+.3f}"

    return fmt(value) if value is None else f"{fmt(value)} [{fmt(low)}, {fmt(high)}]"


def text_table(comparison: Mapping[str, Any]) -> str:
    """The comparison as aligned plain text: one row per metric."""
    rows = [["metric", "A [95% CI]", "B [95% CI]", "B - A [95% CI]", "change", "n A/B/both"]]
    for figures in comparison["metrics"].values():
        a, b, d = figures["a"], figures["b"], figures["difference"]
        rows.append(
            [
                figures["label"],
                _with_ci(a["value"], a["low"], a["high"], signed=False),
                _with_ci(b["value"], b["low"], b["high"], signed=False),
                _with_ci(d["delta"], d["low"], d["high"], signed=True),
                figures["change"],
                f"{a['n']}/{b['n']}/{d['n']}",
            ]
        )
    if len(rows) == 1:
        return "no metrics in either run's results.jsonl"
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in rows
    )


def compare_folders(
    dir_a: str | Path,
    dir_b: str | Path,
    *,
    out: Path | None = None,
    resamples: int = 1000,
    seed: int = 0,
    top: int = 10,
) -> tuple[dict[str, Any], Path]:
    """Compare two run folders; write ``compare.json`` and ``compare.html``.

    Args:
        dir_a: The baseline run (A).
        dir_b: The run compared (B).
        out: The output folder (default: ``DIR_B/compare``).
        resamples: Bootstrap resamples.
        seed: Bootstrap seed (same seed, same intervals).
        top: Records listed per metric as changed most.

    Returns:
        The comparison (as in ``compare.json``) and the folder written.

    Raises:
        RunReadError: A folder is not a run, or a line is malformed; or bad settings.
    """
    if resamples < 1 or top < 0:
        raise RunReadError("resamples must be at least 1 and top at least 0")
    run_a, run_b = read_run(dir_a), read_run(dir_b)
    comparison = compare_runs(run_a, run_b, resamples=resamples, seed=seed, top=top)
    folder = out if out is not None else run_b.folder / "compare"
    folder.mkdir(parents=True, exist_ok=True)
    write_json(folder / "compare.json", comparison)
    write_report(
        folder / "compare.html",
        "todeval compare",
        compare_sections(comparison),
        meta={
            "A": str(run_a.folder),
            "B": str(run_b.folder),
            "bootstrap": f"{resamples} resamples, seed {seed}, percentile 95% "
            f"intervals; differences paired ({PAIRING})",
        },
    )
    return comparison, folder
