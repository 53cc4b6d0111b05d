"""Helpers every subcommand shares: progress bars, output files, usage errors."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from tqdm import tqdm

T = TypeVar("T")


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
