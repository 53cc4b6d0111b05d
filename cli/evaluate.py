"""``todeval evaluate``: every method that applies to each record, one report (the main job).

The work is :func:`graphs.corpus.evaluation.evaluate_corpus` (re-exported by :mod:`graphs.api`):
goal success and goal tracking on every dialogue; goal-shift metrics for transcripts with tool
calls or shifts; memory metrics for returning users. This module parses, shows progress and
prints; ``OUT/results.jsonl``, ``OUT/summary.json`` and ``OUT/report.html`` are the outputs.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path
from typing import Any

from cli.common import UsageError, command_context, fmt_figure, input_path, parse_suites, progress
from graphs.api import METRICS, SUITES, evaluate_corpus


def add_parser(subparsers: Any) -> None:
    """Register ``evaluate`` and its options."""
    parser = subparsers.add_parser(
        "evaluate",
        help="run every evaluation that applies to each record; one report (the main job)",
        description=(
            "Evaluate a corpus with every method that applies: goal segmentation and Goal "
            "Success Rate (Mind the Goal) and goal tracking (ATOD) on every dialogue; "
            "TSR/TUE/TCRR/GSRT (AgentChangeBench) on agent transcripts with tool calls or goal "
            "shifts; memory retrieval and slot repair (MAP) on returning users' items. Writes "
            "OUT/results.jsonl, OUT/summary.json and OUT/report.html. Judges and thresholds "
            "come from --config (todeval.toml), overridden by --judge ROLE=SPEC. Re-running "
            "the same command resumes from the checkpoints."
        ),
    )
    parser.add_argument(
        "inputs",
        nargs="+",
        metavar="INPUT",
        help="one or more inputs, each any of: dialogues (Mind the Goal, SGD file or folder, "
        "ATOD), agent transcripts or tau2 results, a memory benchmark or MS-TOD session file",
    )
    parser.add_argument("--out", required=True, type=Path, help="output folder")
    parser.add_argument(
        "--suite",
        default="all",
        help="which evaluations: all (default) or a comma list of "
        + ", ".join(SUITES)
        + " (short names: gsr, goals, shift)",
    )
    parser.add_argument("--config", default=None, help="todeval.toml with judges and thresholds")
    parser.add_argument(
        "--judge",
        action="append",
        default=[],
        metavar="ROLE=SPEC",
        help="override one judge role, e.g. --judge reader=openai:gpt-4o-mini or "
        "--judge teachers=local,anthropic:claude-3-5-haiku-latest (repeatable)",
    )
    parser.add_argument("--schema", default=None, help="SGD schema.json naming goals by service")
    parser.add_argument(
        "--escalate",
        action="store_true",
        help="with --server: pause turns the teachers split on for a human; answer them in "
        "LangGraph Studio on that server, then re-run to collect. By default they stay "
        "unlabelled and their goals undecided (todeval goal-success + todeval review ask locally)",
    )
    parser.add_argument(
        "--max-concurrency",
        type=int,
        default=1,
        help="records evaluated at once (default 1; local judges are CPU-bound)",
    )
    parser.add_argument(
        "--server",
        default=None,
        metavar="URL",
        help="run the evaluation graph on a LangGraph server (langgraph dev, a deployment) "
        "through langgraph-sdk instead of in this process; LANGGRAPH_API_KEY is sent if set",
    )
    parser.add_argument(
        "--checkpoints",
        default=None,
        help="SQLite checkpoint file (default .todeval/checkpoints.sqlite; ':memory:' for none)",
    )
    parser.add_argument("--limit", type=int, default=None, help="only the first N records")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Evaluate the corpus, write the outputs, print a one-line summary."""
    sources = [input_path(raw) for raw in args.inputs]
    suites = parse_suites(args.suite)
    if args.max_concurrency < 1:
        raise UsageError("--max-concurrency must be at least 1")
    context = command_context(args.config, args.judge, args.schema)
    if args.escalate and not args.server:
        raise UsageError(
            "--escalate needs --server: the paused threads are answered in LangGraph Studio "
            "(for questions on this machine, use todeval goal-success and todeval review)"
        )
    context = replace(context, escalate_ambiguous=bool(args.escalate))
    summary = evaluate_corpus(
        sources,
        context,
        out=args.out,
        suites=suites,
        checkpoints=args.checkpoints,
        limit=args.limit,
        max_concurrency=args.max_concurrency,
        server=args.server,
        progress=progress,
    )
    print(one_line(summary, args.out))
    return 1 if summary["counts"]["records"] == 0 else 0


def one_line(summary: dict[str, Any], out: Path) -> str:
    """The last line a run prints."""
    figures = ", ".join(
        f"{METRICS[name].label} {fmt_figure(value)}"
        for name, value in summary["metrics"].items()
        if name in ("gsr", "goal_detection_f1", "dgcr", "tsr", "recall_at_5", "jga")
    )
    counts = summary["counts"]
    ran = ", ".join(f"{suite} {n}" for suite, n in counts["by_suite"].items())
    return (
        f"evaluated {counts['records']} records ({ran}): {figures or 'no figures'}; "
        f"{counts['skipped_records']} unreadable records skipped, {counts['failed_records']} "
        f"failed, {counts['paused_records']} paused; wrote {out / 'results.jsonl'}, "
        f"{out / 'summary.json'} and {out / 'report.html'}"
    )
