"""Helpers every subcommand shares: progress bars, output files, usage errors."""

from __future__ import annotations

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
