"""``todeval memory build-bench``: the MS-TOD-style multi-session benchmark from SGD (paper 001).

Mounted under the ``memory`` command group: ``add_build_bench_parser(memory_subparsers)``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from cli.common import UsageError, input_path
from evals.datasets.errors import DatasetFormatError
from evals.datasets.ms_tod import (
    INTENTS_PER_INDIVIDUAL,
    SESSIONS_PER_INTENT,
    build_memory_bench,
    dump_memory_bench,
)
from evals.schema import RecordError


def add_build_bench_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``build-bench`` on a subparsers object (``memory``'s, or any other).

    Returns:
        The sub-parser, with ``run`` set as its default.
    """
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "build-bench",
        help="build the multi-session memory benchmark from SGD",
        description=(
            "Build MS-TOD-style individuals from SGD dialogues in which the system confirms a "
            f"transaction: {INTENTS_PER_INDIVIDUAL} intents x {SESSIONS_PER_INTENT} stored "
            "sessions each, one evaluation item per session (the user's utterance before the "
            "confirmation, in a new session, after a re-entry sentence). Same seed, same file."
        ),
    )
    parser.add_argument(
        "--sgd",
        required=True,
        help="SGD data: a compact sgd_<split>.jsonl(.gz), a folder holding one, or the "
        "original release (root or split folder)",
    )
    parser.add_argument("--split", default="dev", help="train, dev or test (default: dev)")
    parser.add_argument("--out", required=True, type=Path, help="the benchmark JSON to write")
    parser.add_argument("--seed", type=int, default=0, help="shuffle seed (default: 0)")
    parser.add_argument(
        "--individuals",
        type=int,
        default=None,
        help="at most N individuals (default: as many as the data allows)",
    )
    parser.set_defaults(run=run_build_bench)
    return parser


def run_build_bench(args: argparse.Namespace) -> int:
    """Build the benchmark, write it, print its counts.

    Raises:
        UsageError: The SGD input is missing or unreadable, or ``--individuals`` is below 1.
    """
    source = input_path(args.sgd)
    if args.individuals is not None and args.individuals < 1:
        raise UsageError("--individuals must be at least 1")
    errors: list[RecordError] = []
    began = time.perf_counter()
    try:
        bench = build_memory_bench(
            source, args.split, seed=args.seed, individuals=args.individuals, errors=errors
        )
    except DatasetFormatError as error:
        raise UsageError(str(error)) from error
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    dump_memory_bench(bench, out)
    for skipped in errors[:5]:
        print(f"skipped SGD record: {skipped}", file=sys.stderr)
    if len(errors) > 5:
        print(f"... and {len(errors) - 5} more unreadable SGD records", file=sys.stderr)
    sessions = sum(len(individual.sessions) for individual in bench.individuals)
    items = sum(len(individual.eval) for individual in bench.individuals)
    print(
        f"{len(bench.individuals)} individuals, {sessions} sessions, {items} eval items "
        f"(SGD {args.split}, seed {args.seed}, {len(errors)} unreadable records) -> {out} "
        f"in {time.perf_counter() - began:.1f}s"
    )
    if not bench.individuals:
        print(
            f"no individual could be built: need {INTENTS_PER_INDIVIDUAL} intents with "
            f"{SESSIONS_PER_INTENT}+ confirmed dialogues each",
            file=sys.stderr,
        )
        return 1
    return 0
