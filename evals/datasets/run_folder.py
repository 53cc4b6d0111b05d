"""A ``todeval evaluate`` run folder read back, for a comparison of two runs.

:func:`read_run` streams the folder's ``results.jsonl`` (each record's metric parts, ``{num,
den}`` per metric) and reads its ``summary.json`` when there is one; the comparison itself is
pure (:func:`evals.metrics.compare.compare_runs`).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from todeval.evals.metrics.record_metrics import Part


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
    if folder.is_dir() and not results.is_file() and (folder / "results.json").is_file():
        raise RunReadError(
            f"{folder}: a `todeval simulate` output folder; score its transcripts first, then "
            f"compare the two evaluations: todeval evaluate {folder / 'results.json'} --out DIR"
        )
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
