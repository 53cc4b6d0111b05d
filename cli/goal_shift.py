"""``todeval goal-shift``: AgentChangeBench's TSR, TUE, TCRR and GSRT over agent transcripts.

The work is :mod:`graphs.corpus.goal_shift`; this module parses, shows progress and prints.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

from todeval.cli.common import (
    add_corpus_arguments,
    add_judge_arguments,
    command_judges,
    fmt_figure,
    input_path,
    progress,
    with_llm_settings,
)
from todeval.graphs.api import (
    Compat,
    Context,
    GoalShiftSettings,
    goal_shift_corpus,
    load_goal_shift_run,
)


def add_parser(subparsers: Any) -> None:
    """Register ``goal-shift`` and its options."""
    defaults = Context()
    parser = subparsers.add_parser(
        "goal-shift",
        help="goal-shift robustness of tool-using agents: TSR, TUE, TCRR, GSRT (AgentChangeBench)",
        description=(
            "Score agent transcripts the AgentChangeBench way: Task Success Rate and its "
            "channels, Tool Usage Efficiency (tool correctness T, parameter validity P), "
            "Tool-Call Redundancy Ratio (window and batch), Goal-Shift Recovery Turns "
            "(acknowledgment, tool, outcome; recovery and transfer rates) and pass^k, with "
            "breakdowns by domain, persona, task and goal sequence. Writes "
            "OUT/conversations.jsonl, OUT/summary.json and OUT/report.html."
        ),
    )
    add_corpus_arguments(
        parser,
        formats=("auto",),
        input_help="tau2 / AgentChangeBench results .json, or .jsonl transcripts",
    )
    parser.add_argument("--tasks", default=None, help="task JSON for tasks the results lack")
    parser.add_argument("--personas", default=None, help="user_personas.json to name personas")
    parser.add_argument("--tools", default=None, help="tool definitions JSON (for P)")
    parser.add_argument("--domain", default=None, help="domain, when the file does not say")
    parser.add_argument(
        "--compat",
        choices=["none", "upstream"],
        default="none",
        help="upstream: AgentChangeBench's own tool metrics (TCRR pooled across conversations)",
    )
    add_judge_arguments(
        parser,
        ["shift_detection", "nl_assertion"],
        aliases={"--shift-judge": "shift_detection", "--nl-judge": "nl_assertion"},
        bare=("shift_detection", "nl_assertion"),
    )
    parser.add_argument(
        "--reuse-judgments",
        action=argparse.BooleanOptionalAction,
        default=GoalShiftSettings.of(defaults).reuse_judgments,
        help="reuse the LLM-judge outputs stored in the results file (default: %(default)s)",
    )
    parser.add_argument(
        "--clean", default=None, help="results of the same tasks without shifts: retention/drop"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Score the run, write conversations.jsonl, summary.json and report.html."""
    source = input_path(args.input)
    context = with_llm_settings(
        Context(
            judges=command_judges(args),
            settings={"goal_shift": {"reuse_judgments": args.reuse_judgments}},
        ),
        args,
    )
    files = {
        "tasks": input_path(args.tasks) if args.tasks else None,
        "personas": input_path(args.personas) if args.personas else None,
        "tools": input_path(args.tools) if args.tools else None,
    }
    goal_run = load_goal_shift_run(source, domain=args.domain, **files)
    clean = (
        load_goal_shift_run(input_path(args.clean), domain=args.domain, **files)
        if args.clean
        else None
    )
    summary = goal_shift_corpus(
        goal_run,
        context,
        out=args.out,
        source=source,
        compat=cast(Compat, args.compat),
        clean=clean,
        checkpoints=args.checkpoints,
        limit=args.limit,
        progress=progress,
    )
    print(one_line(summary, args.out))
    return 1 if not summary["counts"]["conversations"] else 0


def one_line(summary: Mapping[str, Any], out: Path) -> str:
    """The last line a run prints."""
    counts, gsrt = summary["counts"], summary["gsrt"]
    differing = summary.get("param_validity_differences") or []
    if summary.get("compat") == "upstream":
        differing = []  # P is upstream's keyword rule already
    rule = (
        f" ({len(differing)} calls whose P differs from upstream's keyword rule, P "
        f"{fmt_figure(summary.get('param_validity_upstream'))} by it: see "
        "param_validity_differences, or --compat upstream)"
        if differing
        else ""
    )
    left_out = summary.get("tue_not_applicable") or 0
    plural = "s" * (left_out != 1)
    idle = (
        f" [TUE n/a for {left_out} conversation{plural}: no call serves the task]"
        if left_out
        else ""
    )
    return (
        f"scored {counts['conversations']} conversations ({summary['num_tool_calls']} tool "
        f"calls, {gsrt['shifts']} shifts): TSR {fmt_figure(summary['tsr'])}, TUE "
        f"{fmt_figure(summary['tue'])} (T {fmt_figure(summary['tool_correctness'])}, P "
        f"{fmt_figure(summary['param_validity'])}){idle}{rule}, TCRR "
        f"{fmt_figure(summary['tcrr'])}, "
        f"recovery {fmt_figure(gsrt['recovery_rate'])}; "
        f"{counts['conversations_with_issues']} with transcript issues, "
        f"{counts['skipped_records']} unreadable records skipped, "
        f"{counts['failed_conversations']} failed; wrote {out / 'conversations.jsonl'}, "
        f"{out / 'summary.json'} and {out / 'report.html'}"
    )
