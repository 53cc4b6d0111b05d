"""``todeval goal-success`` (alias ``gsr``): Goal Success Rate and root causes (paper 004).

Also ``todeval segment`` (= ``goal-success --segmentation-only``): goal segmentation alone.
The work is :mod:`graphs.corpus.goal_success`; this module parses, shows progress and prints.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from todeval.cli.common import (
    UsageError,
    add_corpus_arguments,
    add_judge_arguments,
    add_sample_arguments,
    command_judges,
    fmt_figure,
    input_path,
    positive,
    progress,
    resolved_format,
    unit_interval,
    with_llm_settings,
)
from todeval.graphs.api import (
    Context,
    GoalSuccessSettings,
    corpus_routes,
    goal_success_corpus,
    segmentation_corpus,
)

COMMAND = "goal-success"


def add_parser(subparsers: Any) -> None:
    """Register ``goal-success`` (alias ``gsr``) and ``segment``."""
    parser = subparsers.add_parser(
        COMMAND,
        aliases=["gsr"],
        help="Goal Success Rate and root causes (E1-E7) with multi-teacher voting",
        description=(
            "Segment every dialogue into goals, have several teachers label each turn's quality "
            "and root cause, take the majority, and score each goal: it succeeds only if every "
            "turn succeeds; a failed goal's root cause is its earliest failed turn's code. "
            "Writes OUT/goals.jsonl, OUT/summary.json and OUT/report.html. Turns on which the "
            "teachers all disagree wait for a human: run `todeval review OUT`. Re-running the "
            "same command resumes from the checkpoints. With --segmentation-only, only goal "
            "segmentation runs (OUT/segments.jsonl, OUT/summary.json)."
        ),
    )
    add_corpus_arguments(parser, checkpoints_note=", which also makes `todeval review` impossible")
    add_judge_arguments(
        parser,
        ["segmentation", "turn_quality"],
        aliases={"--segmenter": "segmentation", "--teachers": "turn_quality"},
    )
    _add_segmentation_arguments(parser)
    parser.add_argument(
        "--routes",
        type=Path,
        default=None,
        help="JSON route table for the routing check (E6): {route: what it handles}; "
        "default: the routes the input uses, described by their names",
    )
    parser.add_argument(
        "--no-escalation",
        action="store_true",
        help="do not pause for humans: ambiguous turns stay unlabelled (null)",
    )
    _add_teacher_inputs(parser)
    parser.add_argument(
        "--segmentation-only",
        action="store_true",
        help="only split the dialogues into goals (is_new_goal per turn; P/R/F1, Pk and "
        "WindowDiff against gold when the input has it)",
    )
    parser.set_defaults(run=run)
    segment = subparsers.add_parser(
        "segment",
        help="split dialogues into goals (= goal-success --segmentation-only)",
        description=(
            "Label every turn with is_new_goal (turn 1 always starts a goal) and write the "
            "goal spans. Writes OUT/segments.jsonl and OUT/summary.json (with precision, recall, "
            "F1, Pk and WindowDiff when the input has gold labels). Re-running the same command "
            "resumes: finished dialogues are read back from the checkpoints."
        ),
    )
    add_corpus_arguments(segment)
    add_judge_arguments(segment, ["segmentation"], bare="segmentation")
    _add_segmentation_arguments(segment)
    segment.set_defaults(run=run, segmentation_only=True)


def _add_teacher_inputs(parser: argparse.ArgumentParser) -> None:
    """Paper 004's sampling step, the business rules and the human calibration."""
    add_sample_arguments(parser)
    parser.add_argument(
        "--sop",
        type=Path,
        default=None,
        metavar="FILE",
        help="a text file with the domain's business rules (SOP), given to the LLM teachers' "
        "prompt; local teachers ignore it (summary.json says which teachers read it)",
    )
    parser.add_argument(
        "--calibration",
        type=Path,
        default=None,
        metavar="FILE",
        help="calibration.json of an earlier reviewed run (todeval review writes it): each "
        "teacher's agreement with the human verdicts is reported, and teachers people often "
        "overruled are flagged",
    )


def _add_segmentation_arguments(parser: argparse.ArgumentParser) -> None:
    defaults = Context()
    parser.add_argument(
        "--threshold",
        type=unit_interval,
        default=None,
        help="new-goal probability cut-off for local:learned (default: the tuned one)",
    )
    parser.add_argument(
        "--time-gap-minutes",
        type=positive,
        default=GoalSuccessSettings.of(defaults).time_gap_minutes,
        help="a longer pause before a message counts as a new-goal signal (default: %(default)s)",
    )


def run(args: argparse.Namespace) -> int:
    """Evaluate (or segment) the corpus, write the outputs, print a one-line summary."""
    source = input_path(args.input)
    fmt = resolved_format(source, args.format)
    judges = command_judges(args)
    context = with_llm_settings(
        Context(
            judges=judges,
            settings={
                "goal_success": {
                    "new_goal_threshold": args.threshold,
                    "time_gap_minutes": args.time_gap_minutes,
                }
            },
        ),
        args,
    )
    if args.segmentation_only:
        summary = segmentation_corpus(
            source, fmt, context, out=args.out, checkpoints=args.checkpoints, limit=args.limit,
            progress=progress,
        )  # fmt: skip
        print(segmentation_line(summary, args.out))
        return 1 if summary["counts"]["dialogues"] == 0 else 0
    teachers = judges["turn_quality"]
    if not teachers:
        raise UsageError("--judge turn_quality=SPECS needs at least one teacher spec")
    routes = _route_table(args.routes) if args.routes else corpus_routes(source, fmt, args.limit)
    if args.sample is not None and args.sample < 1:
        raise UsageError(f"--sample needs a positive number of dialogues, got {args.sample}")
    context = context.updated(
        settings={
            "goal_success": {
                "routes": routes,
                "escalate_ambiguous": not args.no_escalation,
                "teacher_sop": _read_text(args.sop, "--sop") if args.sop else "",
                "teacher_calibration": _calibration_path(args.calibration)
                if args.calibration
                else None,
                "sample": args.sample,
                "sample_seed": args.seed if args.seed is not None else 0,
            }
        },
    )
    summary = goal_success_corpus(
        source, fmt, context, out=args.out, checkpoints=args.checkpoints, limit=args.limit,
        progress=progress,
    )  # fmt: skip
    print(one_line(summary, args.out))
    return 1 if summary["counts"]["dialogues"] == 0 else 0


def _read_text(path: Path, flag: str) -> str:
    text = input_path(str(path)).read_text(encoding="utf-8").strip()
    if not text:
        raise UsageError(f"{flag} {path}: the file is empty")
    return text


def _calibration_path(path: Path) -> str:
    """The absolute path of a calibration.json (a review rewrite runs from anywhere)."""
    found = input_path(str(path)).resolve()
    try:
        teachers = json.loads(found.read_text()).get("teachers")
    except (json.JSONDecodeError, AttributeError) as error:
        raise UsageError(f"--calibration {path}: not a calibration.json ({error})") from error
    if not isinstance(teachers, list):
        raise UsageError(f"--calibration {path}: no 'teachers' list (todeval review writes one)")
    return str(found)


def _route_table(path: Path) -> dict[str, str]:
    try:
        table = json.loads(input_path(str(path)).read_text())
    except json.JSONDecodeError as error:
        raise UsageError(f"--routes {path}: not JSON ({error})") from error
    if not isinstance(table, dict) or not all(isinstance(v, str) for v in table.values()):
        raise UsageError(f"--routes {path}: expected a JSON object {{route: description}}")
    return {str(route): description for route, description in table.items()}


def one_line(summary: dict[str, Any], out: Path) -> str:
    """The last line a goal-success run prints."""
    counts = summary["counts"]
    how = (
        "but --checkpoints :memory: kept nothing to resume"
        if summary["run"]["checkpoints"] == ":memory:"
        else f"todeval review {out}"
    )
    review = (
        f"; {summary['pending_review']} turns in {counts['pending_review_dialogues']} dialogues "
        f"await a human verdict ({how})"
        if summary["pending_review"]
        else ""
    )
    bounds = summary["gsr_bounds"]
    undecided = (
        f" ({summary['undecided_goals']} undecided: GSR between {fmt_figure(bounds['lower'])} "
        f"and {fmt_figure(bounds['upper'])})"
        if summary["undecided_goals"]
        else ""
    )
    return (
        f"GSR {fmt_figure(summary['gsr'])} over {summary['n_goals']} goals{undecided} in "
        f"{counts['dialogues']} dialogues (single-turn {fmt_figure(summary['gsr_single_turn'])}, "
        f"multi-turn {fmt_figure(summary['gsr_multi_turn'])}); {summary['ambiguous']} ambiguous "
        f"turns{review}; "
        f"{counts['skipped_records']} unreadable records skipped, {counts['failed_dialogues']} "
        f"failed; wrote {out / 'goals.jsonl'}, {out / 'summary.json'} and {out / 'report.html'}"
    )


def segmentation_line(summary: dict[str, Any], out: Path) -> str:
    """The last line a segmentation-only run prints."""
    counts, metrics = summary["counts"], summary["metrics"]
    quality = (
        f"F1 {metrics['f1']:.3f} (P {metrics['precision']:.3f}, R {metrics['recall']:.3f})"
        if metrics and metrics.get("f1") is not None
        else "no gold labels"
    )
    return (
        f"segmented {counts['dialogues']} dialogues, {counts['turns']} turns into "
        f"{counts['goals']} goals; {quality}; {counts['skipped_records']} unreadable records "
        f"skipped, {counts['failed_dialogues']} failed (see summary.json); "
        f"judge {summary['judge']}; wrote {out / 'segments.jsonl'} and {out / 'summary.json'}"
    )
