"""Writing a run's output files: JSON summaries and JSON Lines, one line per record."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def jsonl_line(payload: Any) -> str:
    """One compact JSON line."""
    try:  # without tracking every container for cycles: a sixth faster on SGD's lines
        text = json.dumps(payload, ensure_ascii=False, default=str, check_circular=False)
    except RecursionError:  # a cycle (or a very deep value): told as json tells it
        text = json.dumps(payload, ensure_ascii=False, default=str)
    return text + "\n"


def write_json(path: Path, payload: Any) -> None:
    """Pretty JSON with a trailing newline, written whole: to a temporary file, then renamed.

    A crash mid-write leaves the previous file (or none), never half a file.
    """
    text = json.dumps(payload, indent=2, ensure_ascii=False, default=str) + "\n"
    write_text_atomically(path, text)


def write_text_atomically(path: Path, text: str | Iterable[str]) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder and a rename.

    ``text`` may come in pieces (a template's output as it renders), so a large page is never
    one string in memory.
    """
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with temporary.open("w", encoding="utf-8") as sink:
            if isinstance(text, str):
                sink.write(text)
            else:
                sink.writelines(text)
    except BaseException:
        temporary.unlink(missing_ok=True)  # pieces that failed half-way leave no stray file
        raise
    os.replace(temporary, path)


def fmt_figure(value: float | None, digits: int = 3) -> str:
    """A figure for a run's last line: ``digits`` decimals, or ``n/a`` when not computed."""
    return "n/a" if value is None else f"{value:.{digits}f}"
