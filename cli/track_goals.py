"""``todeval track-goals``: ATOD's agentic memory goal tracker over a corpus (paper 000, §5-8).

Each dialogue becomes a sequence of utterances run through the goal-tracker graph (one thread
per dialogue). Gold comes from the input when it has it: ATOD-annotated files carry it, SGD
gold is derived from the dialogue acts (:mod:`evals.datasets.sgd_goals`); Mind the Goal
dialogues are tracked without gold (dGCR, NTC and costs only).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterable, Iterator
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
    usable_result,
    write_json,
)
from evals.datasets import detect_format, load_dialogues
from evals.datasets.atod import load_atod, looks_like_atod
from evals.datasets.loader import Format
from evals.datasets.sgd_goals import sgd_gold_or_error
from evals.datasets.sgd_schema import load_sgd_schema
from evals.goal_tracking_schema import AtodDialogue
from evals.metrics.goal_tracking.goal_detection import match_goals
from evals.metrics.goal_tracking.goal_records import gold_timeline, is_mentioned
from evals.metrics.goal_tracking.report import goal_tracking_report
from evals.record_views import atod_view
from evals.report import goal_tracking_section, write_report
from evals.schema import RecordError
from graphs.goal_tracking import build_goal_tracking_graph
from graphs.runner import ThreadResult, run_corpus
from nodes.context import Context
from nodes.goal_tracking.judges.goal_extraction import goal_extractor
from nodes.goal_tracking.state import GoalTrackingOutput
from nodes.judges.accounting import ACCOUNTING
from nodes.judges.spec import JudgeConfigError, JudgeSpecError
from stores.checkpoint import open_checkpointer

SUBSYSTEM = "goal_tracker"
REPORT_TIMELINES = 40
"""Dialogues whose goal timelines the HTML report draws."""


def add_parser(subparsers: Any) -> None:
    """Register ``track-goals`` and its options."""
    defaults = Context()
    parser = subparsers.add_parser(
        "track-goals",
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
    parser.add_argument(
        "--judge", default=defaults.goal_extraction_judge, help="goal extraction judge spec"
    )
    parser.add_argument(
        "--vector-backend",
        choices=["chroma", "memory"],
        default=defaults.vector_backend,
        help="D_vec: a Chroma collection or an in-process numpy index (default: %(default)s)",
    )
    parser.add_argument("--audit-every", type=int, default=defaults.audit_every)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Track the corpus, write goals.jsonl and summary.json, print a one-line summary."""
    source = input_path(args.input)
    schema_path = str(input_path(args.schema)) if args.schema else None
    context = Context(
        goal_extraction_judge=args.judge,
        schema_path=schema_path,
        vector_backend=args.vector_backend,
        audit_every=args.audit_every,
    )
    try:
        goal_extractor(context.goal_extraction_judge, context.schema_path)
        records = list_records(source, args.format, schema_path)
    except (JudgeSpecError, JudgeConfigError, ValueError) as error:
        raise UsageError(str(error)) from error
    if args.limit is not None:
        records = islice(records, args.limit)
    args.out.mkdir(parents=True, exist_ok=True)
    ACCOUNTING.reset()
    started = time.perf_counter()
    results: list[dict[str, Any]] = []
    shown: list[dict[str, Any]] = []  # goal lines the report draws as timelines
    skipped: list[dict[str, Any]] = []
    failed: list[dict[str, Any]] = []
    with open_checkpointer(args.checkpoints) as saver, (args.out / "goals.jsonl").open("w") as out:
        graph = build_goal_tracking_graph().compile(checkpointer=saver, name=SUBSYSTEM)
        stream = run_corpus(
            graph,
            records,
            subsystem=SUBSYSTEM,
            context=context,
            make_input=tracker_input,
            output_keys=GoalTrackingOutput.__annotations__,
        )
        for record, result in progress(stream, desc="track-goals"):
            usable = usable_result(record, result, skipped=skipped, failed=failed)
            if usable is None:
                continue
            atod, finished, _ = usable
            dialogue_result = scored_result(atod, finished)
            results.append(dialogue_result)
            line = goals_line(dialogue_result)
            out.write(jsonl_line(line))
            out.flush()
            if len(shown) <= REPORT_TIMELINES:  # one more than drawn: the report says "more"
                shown.append(line)
    elapsed = time.perf_counter() - started
    summary = goal_tracking_report(results) | {
        "subsystem": SUBSYSTEM,
        "counts": {
            "dialogues": len(results),
            "utterances": sum(len(r["turns"]) for r in results),
            "goals": sum(len(r["goals"]) for r in results),
            "skipped_records": len(skipped),
            "failed_dialogues": len(failed),
        },
        "judges": {"goal_extraction": context.goal_extraction_judge, "others": "local"},
        "run": {"input": str(source), "context": asdict(context)},
        "skipped": skipped,
        "failed": failed,
        "llm_usage": ACCOUNTING.snapshot(),
        "elapsed_s": round(elapsed, 2),
    }
    summary.pop("dialogues", None)  # per-dialogue rows are in goals.jsonl
    write_json(args.out / "summary.json", summary)
    write_report(
        args.out / "report.html",
        "todeval: goal tracking",
        [goal_tracking_section(summary, shown, max_timelines=REPORT_TIMELINES)],
        meta={"input": str(source), "schema": schema_path or "none", "judge": args.judge},
    )
    print(one_line(summary, args.out))
    return 1 if not results else 0


def list_records(
    source: Path, fmt: str, schema_path: str | None
) -> Iterator[AtodDialogue | RecordError]:
    """Every record as an :class:`AtodDialogue` (gold when the format has it) or an error.

    Raises:
        ValueError: (a ``DatasetFormatError``) the input or the schema cannot be read, or the
            format is not recognised; raised here, before any record is read.
    """
    if fmt == "atod" or (fmt == "auto" and looks_like_atod(source)):
        return load_atod(source)
    chosen: Format = detect_format(source) if fmt == "auto" else ("sgd" if fmt == "sgd" else "mtg")
    schema = load_sgd_schema(schema_path) if schema_path else None
    records = load_dialogues(source, chosen)
    if chosen == "sgd":
        return (
            r if isinstance(r, RecordError) else sgd_gold_or_error(r, schema, file=str(source))
            for r in records
        )
    return (r if isinstance(r, RecordError) else atod_view(r) for r in records)


def tracker_input(dialogue: AtodDialogue) -> dict[str, Any]:
    """The whole dialogue in one call, closing audit included (offline evaluation)."""
    return {
        "dialogue_id": dialogue.dialogue_id,
        "utterances": [{"speaker": t.speaker, "text": t.utterance} for t in dialogue.turns],
        "final": True,
    }


def scored_result(dialogue: AtodDialogue, result: ThreadResult) -> dict[str, Any]:
    """The tracker's output in the shape ``goal_tracking_report`` reads, queries mapped to gold."""
    assert result.output is not None
    goals = [
        {
            "goal_id": g["id"],
            "service": g["domain"],
            "intent": g["intent"],
            "description": g["description"],
            "slots": g["slots"],
            "status": g["status"],
            "status_history": g["status_history"],
            "dependencies": g["dependencies"],
        }
        for g in result.output["goals"]
    ]
    gold = dialogue if dialogue.goal_list else None
    return {
        "dialogue_id": dialogue.dialogue_id,
        "gold": gold,
        "goals": goals,
        "turns": result.output["turns"],
        "costs": result.output["costs"],
        "queries": _gold_queries(result.output["queries"], goals, gold),
    }


def _gold_queries(
    queries: Iterable[dict[str, Any]], goals: list[dict[str, Any]], gold: AtodDialogue | None
) -> list[dict[str, Any]]:
    """Each existence check as ``{"retrieved": gold id | other | None, "expected": gold ids}``.

    An utterance concerns the gold goals whose status changes at it. Of those, the ones already
    mentioned before it are what memory should return; if it only opens new goals, the right
    answer is "none in memory" (an empty set). Utterances whose gold changes nothing are not
    judged. A retrieved memory goal counts as the gold goal it was matched to at the end.
    """
    if gold is None:
        return []
    pairs = dict(match_goals(goals, gold))
    states = gold_timeline(gold.turns)
    expected_at: dict[int, set[str]] = {}
    for turn, before in zip(gold.turns, [{}, *states[:-1]], strict=True):
        concerned = {change.goal_id for change in turn.goal_status_changes}
        if concerned:
            expected_at[turn.turn_id] = {g for g in concerned if is_mentioned(before.get(g))}
    mapped = []
    for query in queries:
        retrieved = query["retrieved"]
        as_gold = None if retrieved is None else pairs.get(retrieved, f"unmatched:{retrieved}")
        mapped.append({"retrieved": as_gold, "expected": expected_at.get(query["turn"])})
    return mapped


def goals_line(result: dict[str, Any]) -> dict[str, Any]:
    """One goals.jsonl line: the tracker's goals and per-utterance states, gold final statuses."""
    gold: AtodDialogue | None = result["gold"]
    return {
        "dialogue_id": result["dialogue_id"],
        "goals": result["goals"],
        "turns": result["turns"],
        "gold": gold.final_statuses() if gold is not None else None,
    }


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
