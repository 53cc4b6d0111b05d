"""Benchmark: ATOD goal tracking with local judges on SGD dev (``make bench``).

``todeval goal-tracking`` with the dev schema: goal detection F1 and status accuracy against the
gold derived from SGD's dialogue acts, status accuracy on the goals the dialogue itself confirms
(a NOTIFY_SUCCESS or NOTIFY_FAILURE for the goal; undetected goals count as wrong), dGCR against
gold dGCR, memory recall, and per-utterance latency, with D_vec in process (numpy) over the
whole dev set and in Chroma on the first 300 dialogues. The figures are given for all services
and, goal by goal, for the dev services absent from SGD train (the local judges never saw them)
and those present, beside the figures of the code before issue 15 (recorded below; ``--goals``
re-scores any earlier run's ``goals.jsonl``). Figures only; nothing here is a test.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any

from bench.cli_run import run_cli
from bench.internals import (
    GoalTrackingTally,
    data_dir,
    load_goal_tracking_records,
    load_sgd_schema,
    restrict_to_services,
)
from todeval.graphs.api import fmt_figure

BEFORE: dict[str, dict[str, Any]] = {
    "all services": {
        "goal_detection_f1": 0.8659, "status_accuracy": 0.8411,
        "confirmed_status_accuracy": 0.4864, "confirmed_completed_accuracy": 0.4822,
        "confirmed_failed_accuracy": 0.5895, "dgcr": 0.9643, "n_confirmed_undetected": 396,
        "completed as": "completed 1141, pending 275, abandoned 234, open 218, failed 113, "
                        "undetected 385",
    },
    "unseen services": {
        "goal_detection_f1": 0.8756, "status_accuracy": 0.8367,
        "confirmed_status_accuracy": 0.4414, "confirmed_completed_accuracy": 0.4249,
        "confirmed_failed_accuracy": 0.5895, "dgcr": 0.9337, "n_confirmed_undetected": 153,
        "completed as": "completed 362, pending 94, abandoned 93, open 67, failed 94, "
                        "undetected 142",
    },
    "seen services": {
        "goal_detection_f1": 0.8588, "status_accuracy": 0.8445,
        "confirmed_status_accuracy": 0.5145, "confirmed_completed_accuracy": 0.5145,
        "confirmed_failed_accuracy": None, "dgcr": 0.9859, "n_confirmed_undetected": 243,
        "completed as": "completed 779, pending 181, abandoned 141, open 151, failed 19, "
                        "undetected 243",
    },
}  # fmt: skip
"""Full SGD dev with the code at the start of issue 15 part 2 (git f956947), scored as here."""

FIGURES = (
    ("detection F1", "goal_detection_f1"),
    ("status accuracy", "status_accuracy"),
    ("confirmed-goal status accuracy", "confirmed_status_accuracy"),
    ("  completed goals", "confirmed_completed_accuracy"),
    ("  failed goals", "confirmed_failed_accuracy"),
    ("dGCR", "dgcr"),
    ("confirmed goals undetected", "n_confirmed_undetected"),
)


def report(label: str, summary: dict[str, Any], elapsed: float, rss_mb: float) -> None:
    """One block of figures."""
    counts = summary["counts"]
    print(
        f"{label}\n"
        f"  dialogues {counts['dialogues']}, utterances {counts['utterances']}, goals "
        f"{counts['goals']}\n"
        f"  detection P {fmt_figure(summary['goal_detection_precision'])} R "
        f"{fmt_figure(summary['goal_detection_recall'])} F1 "
        f"{fmt_figure(summary['goal_detection_f1'])}; status accuracy "
        f"{fmt_figure(summary['status_accuracy'])} (dialogue-confirmed goals "
        f"{fmt_figure(summary.get('confirmed_status_accuracy'))}); memory recall "
        f"{fmt_figure(summary['memory_recall_accuracy'])}\n"
        f"  dGCR {fmt_figure(summary['dgcr'])} (gold {fmt_figure(summary['dgcr_gold'])}); NTC "
        f"{fmt_figure(summary['ntc'])} (gold {fmt_figure(summary['ntc_gold'])})\n"
        f"  latency per utterance p50 {fmt_figure(summary['latency_ms_p50'])} ms, p95 "
        f"{fmt_figure(summary['latency_ms_p95'])} ms; wall {elapsed:.1f} s, peak RSS "
        f"{rss_mb:.0f} MB",
        flush=True,
    )


def scored_results(goals: Path, sgd: Path, schema: Path) -> Iterator[dict[str, Any]]:
    """Each line of a run's ``goals.jsonl`` with its dialogue's gold, as the tally reads it."""
    lines = {}
    with goals.open(encoding="utf-8") as handle:
        for text in handle:
            line = json.loads(text)
            lines[line["dialogue_id"]] = line
    for record in load_goal_tracking_records(sgd, "sgd", str(schema)):
        line = lines.get(getattr(record, "dialogue_id", ""))
        if line is not None:
            yield {"dialogue_id": line["dialogue_id"], "gold": record, "goals": line["goals"],
                   "turns": line["turns"], "costs": [], "queries": []}  # fmt: skip


def figures(results: list[dict[str, Any]], services: Collection[str] | None) -> dict[str, Any]:
    """The tally's figures over ``results``, on ``services`` only when given."""
    tally = GoalTrackingTally()
    for result in results:
        tally.add(result if services is None else restrict_to_services(result, services))
    return tally.report()


def compare(label: str, now: dict[str, Any]) -> None:
    """The figures of one service split, before and now."""
    before = BEFORE.get(label, {})
    print(f"{label}: {'figure':<32} {'before':>8} {'now':>8}")
    for name, key in FIGURES:
        print(f"  {name:<40} {_fmt(before.get(key)):>8} {_fmt(now.get(key)):>8}")
    breakdown = now["confirmed_breakdown"]
    for outcome in ("completed", "failed"):
        row = ", ".join(f"{status} {n}" for status, n in breakdown[outcome].items() if n)
        print(f"  confirmed {outcome} goals ({now[f'n_confirmed_{outcome}']}) end as: {row}")
    if "completed as" in before:
        print(f"  before, confirmed completed goals ended as: {before['completed as']}")


def _fmt(value: Any) -> str:
    return str(value) if isinstance(value, int) else fmt_figure(value)


def by_services(goals: Path, sgd: Path, schema: Path, train_schema: Path) -> None:
    """Figures on all dev services, on those unseen in SGD train, and on the seen ones."""
    results = list(scored_results(goals, sgd, schema))
    dev = set(load_sgd_schema(str(schema)))
    unseen = dev - set(load_sgd_schema(str(train_schema)))
    print(f"unseen services ({len(unseen)}): {', '.join(sorted(unseen))}")
    for label, services in (("all services", None), ("unseen services", unseen),
                            ("seen services", dev - unseen)):  # fmt: skip
        compare(label, figures(results, services))


def main() -> None:
    """Whole dev set in process (figures by service split); Chroma on a slice."""
    parser = argparse.ArgumentParser(description=__doc__)
    root = data_dir() / "sgd"
    parser.add_argument("--sgd", type=Path, default=root / "sgd_dev.jsonl.gz")
    parser.add_argument("--schema", type=Path, default=root / "schema_dev.json")
    parser.add_argument("--train-schema", type=Path, default=root / "schema_train.json")
    parser.add_argument("--limit", type=int, default=None, help="only the first N dialogues")
    parser.add_argument("--goals", type=Path, default=None, help="score this goals.jsonl only")
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores")
    if not args.sgd.exists():
        print(f"SGD dev not found at {args.sgd}: set TODEVAL_DATA_DIR")
        return
    if args.goals is not None:
        by_services(args.goals, args.sgd, args.schema, args.train_schema)
        return
    base = ["goal-tracking", str(args.sgd), "--schema", str(args.schema)]
    with tempfile.TemporaryDirectory(prefix="todeval-bench-") as tmp:
        out = Path(tmp)
        limit = ["--limit", str(args.limit)] if args.limit else []
        result = run_cli(
            [*base, "--vector-backend", "memory", *limit], home=out / "home", out=out / "memory"
        )
        report("SGD dev, local judges, D_vec in process", *result)
        by_services(out / "memory" / "goals.jsonl", args.sgd, args.schema, args.train_schema)
        result = run_cli(
            [*base, "--vector-backend", "chroma", "--limit", str(args.limit or 300)],
            home=out / "home",
            out=out / "chroma",
        )
        report("SGD dev (first dialogues), local judges, D_vec in Chroma", *result)


if __name__ == "__main__":
    main()
