"""Benchmark: local goal segmentation on every labelled set (``make bench``).

For each local variant, boundary precision/recall/F1, Pk, WindowDiff and the exact-segmentation
rate on: SGD dev (all, and the dialogues whose services are all absent from SGD train), the
project's human-style dev set, the two samples, and the cross-style set
``data/validation/goal_boundaries.jsonl`` split into its MultiWOZ-style and other-style parts
(nothing is fit on it, but it was read while the segmenter was written: a development set,
issue 29; the transfer figure is on the segmentation validity card). Then warm throughput
(embedding cache filled, models loaded) in turns/s. ``--cli`` adds the old process-level runs
of ``todeval segment``, cold (fresh ``TODEVAL_HOME``) and warm, with peak RSS. Figures only;
nothing here is a test.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.cli_run import run_cli
from bench.internals import SEGMENTATION, Context, data_dir
from scripts.segmentation_sets import SET_LABELS, evaluation_sets, format_row, score
from todeval.graphs.api import fmt_figure

VARIANTS = ("local:learned", "local:rules")


def figures(sets: dict[str, list[Any]], variants: tuple[str, ...]) -> None:
    """One table per variant: a row per set."""
    for label, name in SET_LABELS.items():
        if label in sets:
            print(f"  {label:<18} {name} ({len(sets[label])} dialogues)")
    for variant in variants:
        judge = SEGMENTATION.judge(variant)
        print(f"\n{variant}", flush=True)
        for label, dialogues in sets.items():
            print("  " + format_row(label, score(judge, dialogues)), flush=True)


def throughput(dialogues: list[Any], variants: tuple[str, ...]) -> None:
    """Warm turns/s: embeddings cached by a first pass, then prepare + segment timed."""
    turns = sum(len(d.turns) for d in dialogues)
    print(f"\nwarm throughput on {len(dialogues)} dialogues, {turns} turns")
    for variant in variants:
        judge = SEGMENTATION.judge(variant)
        judge.prepare(dialogues)
        started = time.perf_counter()
        judge.prepare(dialogues)
        for dialogue in dialogues:
            judge.segment(dialogue, time_gap_minutes=Context.time_gap_minutes, threshold=None)
        elapsed = time.perf_counter() - started
        print(f"  {variant:<14} {turns / elapsed:7.0f} turns/s", flush=True)


def cli_runs(sgd: Path, limit: int | None) -> None:
    """``todeval segment`` in child processes: cold and warm, with peak RSS."""
    with tempfile.TemporaryDirectory(prefix="todeval-bench-") as tmp:
        root = Path(tmp)
        home = root / "home"
        for label in ("cold: empty embedding cache", "warm: embedding cache kept"):
            for leftover in home.glob("checkpoints.sqlite*"):
                leftover.unlink()
            arguments = ["segment", str(sgd), "--judge", "local"]
            arguments += ["--limit", str(limit)] if limit else []
            summary, elapsed, rss = run_cli(arguments, home=home, out=root / label[:4])
            counts, metrics = summary["counts"], summary["metrics"] or {}
            print(
                f"todeval segment, SGD dev, local, {label}: F1 {fmt_figure(metrics.get('f1'))}"
                f"  {counts['turns'] / elapsed:.0f} turns/s incl. start-up, peak RSS {rss:.0f} MB",
                flush=True,
            )


def main() -> None:
    """Figures per variant and set, then throughput."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--limit", type=int, default=None, help="only the first N SGD dialogues")
    parser.add_argument("--sgd", type=Path, default=data_dir() / "sgd" / "sgd_dev.jsonl.gz")
    parser.add_argument("--cli", action="store_true", help="also time `todeval segment` runs")
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores")
    sets = evaluation_sets(sgd_limit=args.limit)
    if "sgd_dev" not in sets:
        print(f"SGD dev not found under {data_dir()}: set TODEVAL_DATA_DIR")
    figures(sets, VARIANTS)
    throughput(sets.get("sgd_dev", sets["own_dev"])[:500], VARIANTS)
    if args.cli and args.sgd.exists():
        cli_runs(args.sgd, args.limit)


if __name__ == "__main__":
    main()
