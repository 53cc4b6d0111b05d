"""Helpers every subcommand shares: progress bars, output files, usage errors, run results."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel
from tqdm import tqdm

from evals.schema import RecordError
from graphs.runner import ThreadResult

T = TypeVar("T")
R = TypeVar("R", bound=BaseModel)


class UsageError(Exception):
    """A problem with what the user asked for (bad spec, missing file): exit code 2."""


def progress(items: Iterable[T], *, desc: str, unit: str = "dialogue") -> Iterator[T]:
    """A progress bar on stderr, hidden when stderr is not a terminal unless TODEVAL_PROGRESS=1."""
    disable = not (sys.stderr.isatty() or os.environ.get("TODEVAL_PROGRESS") == "1")
    yield from tqdm(items, desc=desc, unit=unit, disable=disable, dynamic_ncols=True)


def write_json(path: Path, payload: Any) -> None:
    """Pretty JSON with a trailing newline."""
    path.write_text(json.dumps(payload, indent=2, ensure_ascii=False, default=str) + "\n")


def jsonl_line(payload: Any) -> str:
    """One compact JSON line."""
    return json.dumps(payload, ensure_ascii=False, default=str) + "\n"


def input_path(raw: str) -> Path:
    """An existing input file or folder, else a UsageError naming it."""
    path = Path(raw).expanduser()
    if not path.exists():
        raise UsageError(f"input not found: {path}")
    return path


FORMAT_HELP = {
    "auto": "decide from the file",
    "mtg": "Mind the Goal dialog JSON",
    "sgd": "SGD (compact or original release)",
    "atod": "ATOD-annotated dialogues",
}


def add_corpus_arguments(
    parser: argparse.ArgumentParser,
    *,
    formats: tuple[str, ...] = ("auto", "mtg", "sgd"),
    input_help: str = "a .json/.jsonl(.gz) file or an SGD folder",
    checkpoints_note: str = "",
) -> None:
    """The arguments every corpus command takes: input, --format, --out, --checkpoints, --limit."""
    parser.add_argument("input", help=input_help)
    parser.add_argument(
        "--format",
        choices=list(formats),
        default="auto",
        help="input format: " + "; ".join(f"{f} = {FORMAT_HELP[f]}" for f in formats),
    )
    parser.add_argument("--out", required=True, type=Path, help="output folder")
    parser.add_argument(
        "--checkpoints",
        default=None,
        help="SQLite checkpoint file (default .todeval/checkpoints.sqlite; ':memory:' for none"
        + checkpoints_note
        + ")",
    )
    parser.add_argument("--limit", type=int, default=None, help="only the first N records")


def fmt_figure(value: float | None, digits: int = 3) -> str:
    """A figure for a run's last line: ``digits`` decimals, or ``n/a`` when not computed."""
    return "n/a" if value is None else f"{value:.{digits}f}"


def skipped_row(error: RecordError) -> dict[str, Any]:
    """A record that could not be read, as ``summary.json`` lists it under ``skipped``."""
    return error.model_dump() | {"error": str(error)}


def usable_result(
    record: R | RecordError,
    result: ThreadResult | None,
    *,
    skipped: list[dict[str, Any]],
    failed: list[dict[str, Any]],
    id_key: str = "dialogue_id",
) -> tuple[R, ThreadResult, dict[str, Any]] | None:
    """One item of :func:`graphs.runner.run_corpus` as ``(record, result, output)``, or None.

    An unreadable record is appended to ``skipped`` (:func:`skipped_row`) and a thread that
    failed to ``failed`` (``{id_key: ..., "error": ...}``); both return None.
    """
    if isinstance(record, RecordError):
        skipped.append(skipped_row(record))
        return None
    assert result is not None  # run_corpus pairs every record with its thread's result
    if result.output is None:
        failed.append({id_key: result.dialogue_id, "error": result.error})
        return None
    return record, result, result.output
