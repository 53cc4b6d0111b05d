"""``todeval goal-tracking`` (alias ``track-goals``): ATOD's goal tracker over a corpus.

The work is :mod:`graphs.corpus.goal_tracking`; this module parses, shows progress and prints.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from todeval.cli.common import (
    add_corpus_arguments,
    add_judge_arguments,
    command_judges,
    count,
    fmt_figure,
    input_path,
    progress,
    unit_interval,
    with_llm_settings,
)
from todeval.graphs.api import GOAL_TRACKERS, Context, GoalTrackingSettings, goal_tracking_corpus

COMMAND = "goal-tracking"


def add_parser(subparsers: Any) -> None:
    """Register ``goal-tracking`` (alias ``track-goals``) and its options."""
    defaults = Context()
    parser = subparsers.add_parser(
        COMMAND,
        aliases=["track-goals"],
        help="track every user goal and its lifecycle turn by turn (ATOD agentic memory)",
        description=(
            "Run ATOD's goal tracker over each dialogue (extraction, existence check, update "
            "or insert with dependency evolution, proactive audit) and score it: dGCR, turns "
            "to completion, goal detection F1 and status accuracy against gold (final and over "
            "dialogue progress), memory recall, per-turn latency and LLM tokens. Writes "
            "OUT/goals.jsonl, OUT/summary.json and OUT/report.html."
        ),
    )
    add_corpus_arguments(
        parser,
        formats=("auto", "atod", "sgd", "mtg"),
        input_help="ATOD JSON/JSONL, SGD (compact or original) or Mind the Goal file",
    )
    parser.add_argument(
        "--schema", default=None, help="SGD-style schema.json: goals are named (service, intent)"
    )
    add_judge_arguments(
        parser,
        ["goal_extraction", "proactivity", "response_quality"],
        aliases={
            "--proactivity-judge": "proactivity",
            "--response-quality-judge": "response_quality",
        },
        bare="goal_extraction",
    )
    parser.add_argument(
        "--vector-backend",
        choices=["chroma", "memory"],
        default=GoalTrackingSettings.of(defaults).vector_backend,
        help="D_vec: a Chroma collection or an in-process numpy index (default: %(default)s)",
    )
    parser.add_argument(
        "--audit-every",
        type=count,
        default=GoalTrackingSettings.of(defaults).audit_every,
        help=GoalTrackingSettings.model_fields["audit_every"].description,
    )
    parser.add_argument(
        "--tracker",
        choices=GOAL_TRACKERS,
        default=GoalTrackingSettings.of(defaults).tracker,
        help="ATOD's tracker or a baseline of its Table 3, answering every goal's status after "
        "each utterance from what it remembers; a baseline reads with the goal_extraction "
        "judge (an LLM spec sends its prompts, local replays ATOD's local reader over its "
        "memory) "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--tau",
        type=unit_interval,
        default=GoalTrackingSettings.of(defaults).tau,
        help="existence check: match a goal in memory at this confidence or above "
        "(§5.2 Stage 1; default %(default)s)",
    )
    parser.add_argument(
        "--delta",
        type=unit_interval,
        default=GoalTrackingSettings.of(defaults).delta,
        help="graph evolution: link goals related at this score or above "
        "(§5.2 Stage 3; default %(default)s)",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Track the corpus, write goals.jsonl, summary.json and report.html, print one line."""
    source = input_path(args.input)
    context = with_llm_settings(
        Context(
            judges=command_judges(args),
            schema_path=str(input_path(args.schema)) if args.schema else None,
            settings={
                "goal_tracking": {
                    "vector_backend": args.vector_backend,
                    "audit_every": args.audit_every,
                    "tracker": args.tracker,
                    "tau": args.tau,
                    "delta": args.delta,
                }
            },
        ),
        args,
    )
    summary = goal_tracking_corpus(
        source,
        args.format,
        context,
        out=args.out,
        checkpoints=args.checkpoints,
        limit=args.limit,
        progress=progress,
    )
    print(one_line(summary, args.out))
    return 1 if not summary["counts"]["dialogues"] else 0


def one_line(summary: dict[str, Any], out: Path) -> str:
    """The last line a run prints."""

    def fig(key: str) -> str:
        return fmt_figure(summary.get(key))

    counts = summary["counts"]
    return (
        f"tracked {counts['goals']} goals in {counts['dialogues']} dialogues "
        f"({counts['utterances']} utterances): dGCR {fig('dgcr')}, detection F1 "
        f"{fig('goal_detection_f1')}, status accuracy {fig('status_accuracy')}, latency p50 "
        f"{fig('latency_ms_p50')} ms; {counts['skipped_records']} unreadable records skipped, "
        f"{counts['failed_dialogues']} failed; wrote {out / 'goals.jsonl'}, "
        f"{out / 'summary.json'} and {out / 'report.html'}"
    )
