"""``todeval gsr``: Goal Success Rate and root causes with multi-teacher voting (paper 004).

Writes ``OUT/goals.jsonl`` (one line per goal, flushed as each dialogue finishes),
``OUT/summary.json`` and ``OUT/report.html``. Turns the teachers split on pause their thread for
a human; ``todeval review OUT`` answers them and rewrites the outputs.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict
from itertools import islice
from pathlib import Path
from typing import Any

from cli.common import (
    UsageError,
    add_corpus_arguments,
    fmt_figure,
    input_path,
    jsonl_line,
    progress,
    write_json,
)
from cli.gsr_tally import GsrTally, read_audits
from evals.datasets import detect_format, load_dialogues
from evals.datasets.loader import Format
from evals.report import goal_success_section, write_report
from evals.schema import Dialogue, RecordError, routes_used
from graphs.goal_success import build_goal_success_graph
from graphs.runner import prepared_in_chunks, run_corpus
from nodes.context import Context
from nodes.goal_success.judges.segmentation import segmentation_judge
from nodes.goal_success.judges.turn_quality import turn_quality_teacher
from nodes.goal_success.state import GoalSuccessOutput
from nodes.judges.accounting import ACCOUNTING
from nodes.judges.spec import JudgeConfigError, JudgeSpecError
from stores.checkpoint import open_checkpointer

SUBSYSTEM = "goal_success"


def add_parser(subparsers: Any) -> None:
    """Register ``gsr`` and its options."""
    defaults = Context()
    parser = subparsers.add_parser(
        "gsr",
        help="Goal Success Rate and root causes (E1-E7) with multi-teacher voting",
        description=(
            "Segment every dialogue into goals, have several teachers label each turn's quality "
            "and root cause, take the majority, and score each goal: it succeeds only if every "
            "turn succeeds; a failed goal's root cause is its earliest failed turn's code. "
            "Writes OUT/goals.jsonl, OUT/summary.json and OUT/report.html. Turns on which the "
            "teachers all disagree wait for a human: run `todeval review OUT`. Re-running the "
            "same command resumes from the checkpoints."
        ),
    )
    add_corpus_arguments(parser, checkpoints_note=", which also makes `todeval review` impossible")
    parser.add_argument(
        "--teachers",
        default=",".join(defaults.teachers),
        help="comma-separated teacher specs, local and LLM mixed freely "
        "(default: %(default)s; e.g. openai:gpt-4o,anthropic:claude-3-5-haiku-latest,local)",
    )
    parser.add_argument(
        "--segmenter",
        default=defaults.segmentation_judge,
        help="goal segmentation judge: local (default), local:rules or provider:model",
    )
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
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Evaluate the corpus, write the outputs, print a one-line summary."""
    source = input_path(args.input)
    teachers = [spec.strip() for spec in args.teachers.split(",") if spec.strip()]
    if not teachers:
        raise UsageError("--teachers needs at least one teacher spec")
    fmt: Format = args.format
    if fmt == "auto":
        try:
            fmt = detect_format(source)
        except ValueError as error:
            raise UsageError(str(error)) from error
    context = Context(
        segmentation_judge=args.segmenter,
        teachers=teachers,
        routes=_route_table(args.routes) if args.routes else corpus_routes(source, fmt, args.limit),
        escalate_ambiguous=not args.no_escalation,
    )
    summary = evaluate_corpus(
        source, fmt, context, out=args.out, checkpoints=args.checkpoints, limit=args.limit
    )
    print(one_line(summary, args.out))
    return 1 if summary["counts"]["dialogues"] == 0 else 0


def _route_table(path: Path) -> dict[str, str]:
    try:
        table = json.loads(input_path(str(path)).read_text())
    except json.JSONDecodeError as error:
        raise UsageError(f"--routes {path}: not JSON ({error})") from error
    if not isinstance(table, dict) or not all(isinstance(v, str) for v in table.values()):
        raise UsageError(f"--routes {path}: expected a JSON object {{route: description}}")
    return {str(route): description for route, description in table.items()}


def corpus_routes(source: Path, fmt: Format, limit: int | None) -> dict[str, str]:
    """A first, cheap pass over the input: the routes its turns name (the default table)."""
    records = islice(load_dialogues(source, fmt), limit)
    return routes_used(record for record in records if isinstance(record, Dialogue))


def evaluate_corpus(
    source: Path,
    fmt: Format,
    context: Context,
    *,
    out: Path,
    checkpoints: str | None,
    limit: int | None,
) -> dict[str, Any]:
    """Run (or read back) every dialogue's thread and write goals, summary and report."""
    try:
        segmenter = segmentation_judge(context.segmentation_judge, context.llm_max_retries)
        teachers = [
            turn_quality_teacher(spec, context.llm_max_retries) for spec in context.teachers
        ]
    except (JudgeSpecError, JudgeConfigError) as error:
        raise UsageError(str(error)) from error

    def prepare(dialogues: Sequence[Dialogue]) -> None:
        segmenter.prepare(dialogues)
        for teacher in teachers:
            teacher.prepare(dialogues)

    out.mkdir(parents=True, exist_ok=True)
    ACCOUNTING.reset()
    started = time.perf_counter()
    tally = GsrTally(read_audits(out / "verdicts.jsonl"))
    with open_checkpointer(checkpoints) as saver:
        graph = build_goal_success_graph().compile(checkpointer=saver, name=SUBSYSTEM)
        records: Iterable[Dialogue | RecordError] = load_dialogues(source, fmt)
        if limit is not None:
            records = islice(records, limit)
        results = run_corpus(
            graph,
            prepared_in_chunks(records, prepare),
            subsystem=SUBSYSTEM,
            context=context,
            make_input=lambda d: {"dialogue": d.model_dump(mode="json")},
            output_keys=GoalSuccessOutput.__annotations__,
        )
        with (out / "goals.jsonl").open("w") as goals_file:
            for record, result in progress(results, desc="gsr"):
                for line in tally.add(record, result):
                    goals_file.write(jsonl_line(line))
                goals_file.flush()  # a killed run leaves whole lines behind
    elapsed = time.perf_counter() - started
    summary = tally.summary(context) | {
        "subsystem": SUBSYSTEM,
        "run": {
            "input": str(source.resolve()),
            "format": fmt,
            "checkpoints": checkpoints,
            "limit": limit,
            "context": asdict(context),
        },
        "llm_usage": ACCOUNTING.snapshot(),
        "elapsed_s": round(elapsed, 2),
        "goals_per_s": round(tally.n_goals / elapsed, 1) if elapsed > 0 else None,
        "outputs": {name: str(out / name) for name in ("goals.jsonl", "report.html")},
    }
    write_json(out / "summary.json", summary)
    write_report(
        out / "report.html",
        "todeval: Goal Success Rate",
        [goal_success_section(summary, tally.report_goals, tally.report_dialogues)],
        meta={
            "input": str(source),
            "segmenter": context.segmentation_judge,
            "teachers": ", ".join(context.teachers),
            "escalation": "on" if context.escalate_ambiguous else "off",
        },
    )
    return summary


def one_line(summary: dict[str, Any], out: Path) -> str:
    """The last line a run prints."""
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
