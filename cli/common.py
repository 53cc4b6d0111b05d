"""Helpers every subcommand shares: progress bars, usage errors, input paths, corpus arguments."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any, TypeVar

from tqdm import tqdm

from graphs.api import (
    EVALUATE_DEFAULTS,
    SUITES,
    Context,
    Format,
    Suite,
    build_context,
    detect_format,
    fmt_figure,
    suite_named,
)

T = TypeVar("T")

__all__ = [
    "UsageError",
    "add_corpus_arguments",
    "command_context",
    "fmt_figure",
    "input_path",
    "parse_suites",
    "progress",
    "resolved_format",
]


class UsageError(Exception):
    """A problem with what the user asked for (bad spec, missing file): exit code 2."""


def progress(items: Iterable[T], desc: str, unit: str = "dialogue") -> Iterator[T]:
    """A progress bar on stderr, hidden when stderr is not a terminal unless TODEVAL_PROGRESS=1."""
    disable = not (sys.stderr.isatty() or os.environ.get("TODEVAL_PROGRESS") == "1")
    yield from tqdm(items, desc=desc, unit=unit, disable=disable, dynamic_ncols=True)


def input_path(raw: str) -> Path:
    """An existing input file or folder, else a UsageError naming it."""
    path = Path(raw).expanduser()
    if not path.exists():
        raise UsageError(f"input not found: {path}")
    return path


def resolved_format(source: Path, fmt: str) -> Format:
    """``--format``, with ``auto`` decided from the file (a UsageError when it cannot be)."""
    if fmt != "auto":
        return "sgd" if fmt == "sgd" else "mtg"
    try:
        return detect_format(source)
    except ValueError as error:
        raise UsageError(str(error)) from error


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


def parse_suites(raw: str) -> list[Suite]:
    """``all`` or a comma list of suite names (or their short names)."""
    names = [name.strip() for name in raw.split(",") if name.strip()]
    if names == ["all"]:
        return list(SUITES)
    wanted = {suite_named(name) for name in names}
    if None in wanted or not names:
        raise UsageError(f"--suite {raw!r}: expected all or a comma list of {', '.join(SUITES)}")
    return [suite for suite in SUITES if suite in wanted]


def judge_overrides(pairs: Sequence[str]) -> dict[str, Any]:
    """``ROLE=SPEC`` flags as Context settings (a role may drop ``_judge``; teachers split)."""
    overrides: dict[str, Any] = {}
    known = {f.name for f in fields(Context)}
    for pair in pairs:
        role, sep, spec = pair.partition("=")
        role, spec = role.strip(), spec.strip()
        name = role if role in known else f"{role}_judge"
        if not sep or not spec or name not in known:
            raise UsageError(f"--judge {pair!r}: expected ROLE=SPEC with a known role")
        teachers = [s.strip() for s in spec.split(",") if s.strip()]
        overrides[name] = teachers if name == "teachers" else spec
    return overrides


def command_context(config: str | None, judges: Sequence[str], schema: str | None) -> Context:
    """The context ``--config``, ``--judge ROLE=SPEC`` and ``--schema`` give.

    Over the evaluation's defaults (``EVALUATE_DEFAULTS``); flags beat the config file.
    """
    overrides = judge_overrides(judges) | {
        "schema_path": str(input_path(schema)) if schema else None,
    }
    return build_context(config, overrides, base=EVALUATE_DEFAULTS)
