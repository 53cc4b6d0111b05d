"""``todeval segment``: split every dialogue of a corpus into goals (paper 004, Section 4.1)."""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterable
from dataclasses import asdict
from itertools import islice
from pathlib import Path
from typing import Any

from cli.common import (
    UsageError,
    add_corpus_arguments,
    input_path,
    jsonl_line,
    progress,
    usable_result,
    write_json,
)
from evals.datasets import detect_format, load_dialogues
from evals.metrics.goal_success.segmentation import segmentation_report
from evals.schema import Dialogue, RecordError
from graphs.goal_success import build_goal_segmentation_graph
from graphs.runner import ThreadResult, prepared_in_chunks, run_corpus
from nodes.context import Context
from nodes.goal_success.judges.segmentation import segmentation_judge
from nodes.goal_success.state import SegmentationOutput
from nodes.judges.accounting import ACCOUNTING
from nodes.judges.spec import JudgeConfigError, JudgeSpecError
from stores.checkpoint import open_checkpointer

SUBSYSTEM = "goal_segmentation"


def add_parser(subparsers: Any) -> None:
    """Register ``segment`` and its options."""
    parser = subparsers.add_parser(
        "segment",
        help="split dialogues into goals (is_new_goal per turn)",
        description=(
            "Label every turn with is_new_goal (turn 1 always starts a goal) and write the "
            "goal spans. Writes OUT/segments.jsonl and OUT/summary.json (with precision, recall, "
            "F1, Pk and WindowDiff when the input has gold labels). Re-running the same command "
            "resumes: finished dialogues are read back from the checkpoints."
        ),
    )
    add_corpus_arguments(parser)
    parser.add_argument(
        "--judge",
        default="local",
        help="segmentation judge: local (default, learned), local:rules, or provider:model "
        "(e.g. openai:gpt-4o-mini)",
    )
    parser.add_argument(
        "--threshold",
        type=float,
        default=None,
        help="new-goal probability cut-off for local:learned (default: the tuned one)",
    )
    parser.add_argument(
        "--time-gap-minutes",
        type=float,
        default=Context.time_gap_minutes,
        help="a longer pause before a message counts as a new-goal signal (default: %(default)s)",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Segment the corpus, write the outputs, print a one-line summary."""
    source = input_path(args.input)
    context = Context(
        segmentation_judge=args.judge,
        new_goal_threshold=args.threshold,
        time_gap_minutes=args.time_gap_minutes,
    )
    try:
        fmt = detect_format(source) if args.format == "auto" else args.format
        judge = segmentation_judge(context.segmentation_judge, context.llm_max_retries)
    except (JudgeSpecError, JudgeConfigError, ValueError) as error:
        raise UsageError(str(error)) from error
    args.out.mkdir(parents=True, exist_ok=True)
    ACCOUNTING.reset()
    started = time.perf_counter()
    with open_checkpointer(args.checkpoints) as saver:
        graph = build_goal_segmentation_graph().compile(checkpointer=saver, name=SUBSYSTEM)
        tally = _Tally()
        records: Iterable[Dialogue | RecordError] = load_dialogues(source, fmt)
        if args.limit is not None:
            records = islice(records, args.limit)
        records = prepared_in_chunks(records, judge.prepare)
        with (args.out / "segments.jsonl").open("w") as segments:
            for record, result in progress(
                run_corpus(
                    graph,
                    records,
                    subsystem=SUBSYSTEM,
                    context=context,
                    make_input=lambda d: {"dialogue": d.model_dump(mode="json")},
                    output_keys=SegmentationOutput.__annotations__,
                ),
                desc="segment",
            ):
                line = tally.add(record, result)
                if line is not None:
                    segments.write(jsonl_line(line))
                    segments.flush()  # a killed run leaves whole lines behind
    summary = tally.summary(
        source=source, fmt=fmt, context=context, elapsed_s=time.perf_counter() - started
    )
    summary["outputs"] = {"segments": str(args.out / "segments.jsonl")}
    write_json(args.out / "summary.json", summary)
    print(_one_line(summary, args.out))
    nothing_evaluated = summary["counts"]["dialogues"] == 0
    return 1 if nothing_evaluated else 0


class _Tally:
    """Counts, skipped records and gold/predicted pairs, gathered as results stream in."""

    def __init__(self) -> None:
        self.dialogues = self.turns = self.goals = self.new_goals = self.resumed = 0
        self.skipped: list[dict[str, Any]] = []
        self.failed: list[dict[str, Any]] = []
        self.pairs: list[tuple[list[bool], list[bool]]] = []
        self.unlabelled = 0

    def add(
        self, record: Dialogue | RecordError, result: ThreadResult | None
    ) -> dict[str, Any] | None:
        usable = usable_result(record, result, skipped=self.skipped, failed=self.failed)
        if usable is None:
            return None
        dialogue, thread, output = usable
        labels = [turn["is_new_goal"] for turn in output["turns"]]
        self.dialogues += 1
        self.turns += len(labels)
        self.goals += len(output["goals"])
        self.new_goals += sum(bool(label) for label in labels[1:])
        self.resumed += int(thread.resumed)
        gold = dialogue.gold_new_goal_labels()
        if None in labels:
            self.unlabelled += 1
        elif gold is not None:
            self.pairs.append((gold, [bool(label) for label in labels]))
        line = {
            "dialogue_id": output["dialogue_id"],
            "turns": [
                {"turn_number": t["turn_number"], "is_new_goal": t["is_new_goal"]}
                for t in output["turns"]
            ],
            "goals": output["goals"],
            "judge": output["judge"],
        }
        if output.get("reason"):
            line["reason"] = output["reason"]
        return line

    def summary(
        self, *, source: Path, fmt: str, context: Context, elapsed_s: float
    ) -> dict[str, Any]:
        later_turns = self.turns - self.dialogues
        metrics: dict[str, Any] | None = segmentation_report(self.pairs) if self.pairs else None
        return {
            "subsystem": SUBSYSTEM,
            "input": str(source),
            "format": fmt,
            "judge": context.segmentation_judge,
            "context": asdict(context),
            "counts": {
                "dialogues": self.dialogues,
                "turns": self.turns,
                "goals": self.goals,
                "new_goal_share": round(self.new_goals / later_turns, 4) if later_turns else None,
                "resumed_from_checkpoint": self.resumed,
                "skipped_records": len(self.skipped),
                "failed_dialogues": len(self.failed),
                "dialogues_with_unlabelled_turns": self.unlabelled,
            },
            "metrics": metrics,
            "metrics_note": None if metrics else "no gold is_new_goal labels in the input",
            "skipped": self.skipped,
            "failed": self.failed,
            "llm_usage": ACCOUNTING.snapshot(),
            "elapsed_s": round(elapsed_s, 2),
            "turns_per_s": round(self.turns / elapsed_s, 1) if elapsed_s > 0 else None,
        }


def _one_line(summary: dict[str, Any], out: Path) -> str:
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
