"""The commands' argument types: checks argparse runs while it parses, importing nothing heavy.

:mod:`cli.common` re-exports them; they live here so that the parser manifest
(:mod:`cli.manifest`) answers a usage error with the very checks the commands' parsers run,
without importing the graphs.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from todeval.evals.metrics.gate import GateSpecError, Threshold, parse_thresholds

__all__ = [
    "UsageError",
    "count",
    "input_path",
    "positive",
    "thresholds",
    "unit_interval",
    "writable_file",
    "writable_folder",
]


N = TypeVar("N", int, float)


class UsageError(Exception):
    """A problem with what the user asked for (bad spec, missing file): exit code 2."""


def input_path(raw: str) -> Path:
    """An existing input file or folder, else a UsageError naming it."""
    path = Path(raw).expanduser()
    if not path.exists():
        raise UsageError(f"input not found: {path}")
    return path


def _number(raw: str, cast: Callable[[str], N], kind: str, ok: Callable[[N], bool], want: str) -> N:
    """``raw`` read by ``cast``; an ArgumentTypeError naming ``kind`` or ``want`` otherwise."""
    try:
        value = cast(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {kind}, got {raw!r}") from None
    if not ok(value):
        raise argparse.ArgumentTypeError(f"expected {want}, got {value if cast is int else raw}")
    return value


def count(raw: str) -> int:
    """An argparse type: a whole number of at least 1."""
    return _number(raw, int, "a whole number", lambda v: v >= 1, "1 or more")


def positive(raw: str) -> float:
    """An argparse type: a number above 0."""
    return _number(raw, float, "a number", lambda v: v > 0, "a number above 0")


def unit_interval(raw: str) -> float:
    """An argparse type: a threshold in [0, 1]."""
    return _number(raw, float, "a number", lambda v: 0.0 <= v <= 1.0, "a number in [0, 1]")


def writable_folder(raw: str) -> Path:
    """An argparse type: an output folder that is, or can be made, writable (made later)."""
    path = Path(raw).expanduser()
    existing = next(p for p in (path, *path.absolute().parents) if p.exists())
    if not existing.is_dir():
        raise argparse.ArgumentTypeError(f"cannot write to {path}: {existing} is not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"cannot write to {path}: {existing} is not writable")
    return path


def writable_file(raw: str) -> Path:
    """An argparse type: an output file in a folder that is, or can be made, writable."""
    path = Path(raw).expanduser()
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"cannot write to {path}: it is a folder")
    writable_folder(str(path.parent))
    return path


def thresholds(text: str) -> dict[str, Threshold]:
    """An argparse type: ``--fail-under FIGURE=VALUE[,...]``."""
    try:
        return parse_thresholds(text)
    except GateSpecError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
