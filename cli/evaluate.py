"""``todeval evaluate``: every method that applies to each record, one report (the main job).

The work is :func:`graphs.corpus.evaluation.evaluate_corpus` (re-exported by :mod:`graphs.api`):
goal success and goal tracking on every dialogue; goal-shift metrics for transcripts with tool
calls or shifts; memory metrics for returning users. This module parses, shows progress and
prints; ``OUT/results.jsonl``, ``OUT/summary.json`` and ``OUT/report.html`` are the outputs.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

from todeval.cli.common import (
    UsageError,
    add_gate_arguments,
    add_judge_arguments,
    add_llm_arguments,
    add_sample_arguments,
    command_context,
    count,
    fmt_figure,
    gate,
    input_path,
    parse_suites,
    progress,
    uses_llm,
    writable_folder,
)
from todeval.graphs.api import (
    GOAL_TRACKERS,
    METRICS,
    SUITES,
    GoalTrackingSettings,
    dry_run_estimate,
    dry_run_text,
    evaluate_corpus,
    evaluation_figures,
    evaluation_roles,
    is_postgres_url,
)


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
            "come from --config (todeval.toml), overridden by --judge ROLE=SPEC (e.g. "
            "proactivity=, response_quality=, scorer= for the MAP GPT-4 score); the goal "
            "tracker (goal_tracker = atod or a Table 3 baseline), tau and delta are --config "
            "settings. Re-running the same command resumes from the checkpoints."
        ),
    )
    parser.add_argument(
        "inputs",
        nargs="+",
        metavar="INPUT",
        help="one or more inputs, each any of: dialogues (Mind the Goal, SGD file or folder, "
        "ATOD), agent transcripts or tau2 results, a memory benchmark or MS-TOD session file, "
        "ProactiveEval environments with the agent's plan and/or guidance messages",
    )
    parser.add_argument("--out", required=True, type=writable_folder, help="output folder")
    parser.add_argument(
        "--suite",
        default="all",
        help="which evaluations: all (default) or a comma list of "
        + ", ".join(SUITES)
        + " (short names: gsr, goals, shift)",
    )
    parser.add_argument("--config", default=None, help="todeval.toml with judges and thresholds")
    add_judge_arguments(parser, evaluation_roles())
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
        type=count,
        default=None,
        help="records evaluated at once (default: 1 with local judges, which are CPU-bound; "
        "with LLM judges as many as --llm-concurrency, so that many calls are in flight)",
    )
    where = parser.add_argument_group(
        "where the records run", "default: in this process; results are the same anywhere"
    )
    where.add_argument(
        "--workers",
        type=count,
        default=1,
        metavar="N",
        help="run record chunks in N processes on this machine (local judges are CPU-bound: "
        "use about one per core); results in input order, resumable, the same figures",
    )
    where.add_argument(
        "--cluster",
        default=None,
        metavar="ADDRESS",
        help="run record chunks as tasks on a Ray cluster: ray://HOST:10001 (Ray Client), "
        "HOST:6379, or auto (the cluster this machine is part of); needs --checkpoints "
        "postgresql://... so that every node reaches the checkpoints (pip install -e '.[cluster]')",
    )
    where.add_argument(
        "--chroma",
        default=None,
        metavar="URL",
        help="keep the memory banks on the Chroma server at URL (http://HOST:8000), which "
        "every worker shares (default: on disk; with --workers and memory items a server is "
        "started for the run)",
    )
    where.add_argument(
        "--server",
        default=None,
        metavar="URL",
        help="run the evaluation graph on a LangGraph server (langgraph dev, a deployment) "
        "through langgraph-sdk instead of in this process; LANGGRAPH_API_KEY is sent if set",
    )
    parser.add_argument(
        "--checkpoints",
        default=None,
        help="SQLite file or postgresql://user@host:port/db (shared by workers; the cluster extra) "
        "for the checkpoints (default .todeval/checkpoints.sqlite; ':memory:' for none)",
    )
    parser.add_argument("--limit", type=count, default=None, help="only the first N records")
    add_sample_arguments(parser)
    add_llm_arguments(parser)
    add_gate_arguments(parser, what="a corpus figure")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Evaluate the corpus, write the outputs, print a one-line summary."""
    sources = [input_path(raw) for raw in args.inputs]
    suites = parse_suites(args.suite)
    context = command_context(args)
    if args.escalate and not args.server:
        raise UsageError(
            "--escalate needs --server: the paused threads are answered in LangGraph Studio "
            "(for questions on this machine, use todeval goal-success and todeval review)"
        )
    tracker = GoalTrackingSettings.of(context).tracker
    if tracker not in GOAL_TRACKERS:
        raise UsageError(
            f"goal_tracker {tracker!r} (--config): expected one of " + ", ".join(GOAL_TRACKERS)
        )
    context = context.updated(
        settings={"goal_success": {"escalate_ambiguous": bool(args.escalate)}}
    )
    if args.chroma:
        context = context.updated(settings={"memory": {"chroma_server": args.chroma}})
    concurrency = args.max_concurrency or (context.llm.max_concurrency if uses_llm(context) else 1)
    if context.llm.dry_run:
        return dry_run(sources, context, suites, args.limit, concurrency)
    check_placement(args, context)
    summary = evaluate_corpus(
        sources,
        context,
        out=args.out,
        suites=suites,
        checkpoints=args.checkpoints,
        limit=args.limit,
        max_concurrency=concurrency,
        server=args.server,
        workers=args.workers,
        cluster=args.cluster,
        progress=progress,
    )
    for line in notices(summary):
        print(line)
    print(one_line(summary, args.out))
    counts = summary["counts"]
    if counts["records"] == 0 or counts.get("failed_records", 0) >= counts["records"]:
        return 1  # nothing evaluated: no figure to stand on
    return gate(args, lambda: evaluation_figures(args.out), 0)


def check_placement(args: argparse.Namespace, context: Any) -> None:
    """``--workers``, ``--cluster`` and ``--server`` go one at a time, with what they need."""
    chosen = [
        flag
        for flag, given in (
            ("--workers", args.workers > 1),
            ("--cluster", args.cluster),
            ("--server", args.server),
        )
        if given
    ]
    if len(chosen) > 1:
        raise UsageError(f"{' and '.join(chosen)}: choose one place for the records to run")
    if not chosen or chosen == ["--server"]:
        return
    if context.llm.max_calls is not None or context.llm.budget_usd is not None:
        raise UsageError(
            f"{chosen[0]} with --max-llm-calls or --budget: a budget is kept in one process; "
            "run without it, or spread LLM calls with --llm-concurrency instead"
        )
    target = args.checkpoints or ""
    if args.cluster and not (is_postgres_url(target) or target == ":memory:"):
        raise UsageError(
            "--cluster needs --checkpoints postgresql://USER@HOST:PORT/DB: every node must "
            "reach the checkpoints (':memory:' runs without them: nothing resumes)"
        )


def dry_run(
    sources: list[Path], context: Any, suites: list[Any], limit: int | None, concurrency: int
) -> int:
    """Run every record with no LLM request sent; print what a real run would send."""
    with tempfile.TemporaryDirectory(prefix="todeval-dry-run-") as scratch:
        summary = evaluate_corpus(
            sources,
            context,
            out=Path(scratch),
            suites=suites,
            checkpoints=":memory:",  # nothing of a dry run is kept
            limit=limit,
            max_concurrency=concurrency,
            progress=progress,
        )
    prices = context.llm.prices
    print(
        dry_run_text(dry_run_estimate(summary["llm_usage"], summary["llm_usage_by_judge"], prices))
    )
    return 0


def notices(summary: dict[str, Any]) -> list[str]:
    """What the user should know before the figures: duplicates, unanswered LLM calls, issues."""
    lines = []
    duplicates = summary["duplicate_records"]["count"]
    if duplicates:
        first = ", ".join(summary["duplicate_records"]["ids"][:3])
        lines.append(
            f"note: {duplicates} records repeated an earlier one exactly and were evaluated "
            f"once ({first}…)"
        )
    unanswered = summary["unanswered_records"]["count"]
    if unanswered:
        lines.append(
            f"note: {unanswered} records have LLM labels left null by failed or refused calls "
            "(reasons in results.jsonl); re-run the same command to ask only those"
        )
    issues = summary["counts"].get("transcript_issues", 0)
    if issues:
        lines.append(
            f"note: {issues} transcript issues (unknown tools, orphan tool results, bad "
            'arguments) in the inputs; see summary.json "transcript_issues"'
        )
    return lines


def _floor(floor: dict[str, Any] | None) -> str:
    value = (floor or {}).get("value")
    return "" if value is None else f" (do-nothing floor {fmt_figure(value)})"


def one_line(summary: dict[str, Any], out: Path) -> str:
    """The last line a run prints."""
    floors = summary.get("floors") or {}
    figures = ", ".join(
        f"{METRICS[name].label} {fmt_figure(value)}{_floor(floors.get(name))}"
        for name, value in summary["metrics"].items()
        if name
        in (
            "gsr",
            "goal_detection_f1",
            "dgcr",
            "tsr",
            "recall_at_5",
            "jga",
            "proactive_plan_score",
            "proactive_guidance_score",
        )
    )
    counts = summary["counts"]
    ran = ", ".join(f"{suite} {n}" for suite, n in counts["by_suite"].items())
    return (
        f"evaluated {counts['records']} records ({ran}): {figures or 'no figures'}; "
        f"{counts['skipped_records']} unreadable records skipped, {counts['failed_records']} "
        f"failed, {counts['paused_records']} paused; wrote {out / 'results.jsonl'}, "
        f"{out / 'summary.json'} and {out / 'report.html'}"
    )
