"""Benchmark: MAP's memory-active policy on multi-session benches built from SGD (``make bench``).

Builds three MS-TOD-style benchmarks with ``todeval memory build-bench`` and evaluates each with
``todeval memory eval`` and local judges everywhere, with the split's SGD schema and without:

(a) SGD dev, seed 0 (the benchmark the project has used so far);
(b) SGD dev, another seed (``--fresh-seed``: the same dialogues, other individuals and siblings);
(c) SGD train restricted to services held out of everything the local judges were tuned on
    (:data:`HELD_OUT_SERVICES`: the train services that dev does not have).

(a') bench (a) built with ``--hard``: the re-entry line names no stored value, so memory is
     found from the intent and the user's own utterance.

For each it prints Recall@5, slot accuracy beside its ceiling (the share of gold values
recoverable before repair, per item and pooled; :mod:`evals.metrics.memory.ceiling`), JGA
(from the predicted dialogue state) beside its ceiling and the mention-based JGA, DTE beside its
floor, the repair success rate, and wall time. ``--ablation`` runs MAP's comparison grid
(retrieval x judger, refinement) on (a) instead; ``--baselines`` runs MAP, its per-QA activation
and the paper's comparison settings (``memory eval --baselines``) on (a) and (a'), with the
schema. Figures only, not a test; ``--individuals`` keeps runs short on a shared machine.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.cli_run import run_cli
from bench.internals import PROJECT_ROOT, data_dir

#: SGD train services absent from SGD dev: bench (c) is built from train dialogues that use
#: only these, so no intent capture rule, judger feature or threshold was tuned on them.
HELD_OUT_SERVICES = (
    "Banks_1", "Buses_2", "Calendar_1", "Events_2", "Flights_1", "Flights_2", "Hotels_2",
    "Hotels_3", "Media_1", "Movies_1", "Music_2", "RentalCars_2", "Restaurants_1",
    "RideSharing_2", "Services_1", "Services_2", "Services_3",
)  # fmt: skip


def held_out_sgd(train: Path, out: Path, services: tuple[str, ...] = HELD_OUT_SERVICES) -> int:
    """Write the compact SGD train dialogues that use only ``services``; return how many."""
    kept = 0
    with gzip.open(train, "rt", encoding="utf-8") as source, gzip.open(out, "wt") as sink:
        for line in source:
            if line.strip() and set(json.loads(line).get("services", [])) <= set(services):
                sink.write(line)
                kept += 1
    return kept


def build(
    sgd: Path, split: str, seed: int, individuals: int, out: Path, *, hard: bool = False
) -> None:
    """``todeval memory build-bench`` (quietly)."""
    subprocess.run(
        [sys.executable, "-m", "todeval.cli.main", "memory", "build-bench", "--sgd", str(sgd),
         "--split", split, "--seed", str(seed), "--individuals", str(individuals),
         "--out", str(out), *(["--hard"] if hard else [])],
        check=True, cwd=PROJECT_ROOT, stdout=subprocess.DEVNULL,
    )  # fmt: skip


def _pct(value: Any) -> str:
    return "  n/a" if value is None else f"{value:5.3f}"


def figures_line(label: str, summary: dict[str, Any], elapsed: float) -> str:
    """One row: every figure beside its ceiling."""
    return (
        f"{label:44} {summary['items']:5d}  R@5 {_pct(summary.get('recall_at_5'))}  "
        f"slot acc {_pct(summary.get('slot_accuracy'))} / ceil {_pct(summary.get('slot_ceiling'))}"
        f" (pooled {_pct(summary.get('slot_accuracy_pooled'))} / "
        f"{_pct(summary.get('slot_ceiling_pooled'))})  "
        f"JGA {_pct(summary.get('jga'))} / ceil {_pct(summary.get('jga_ceiling'))} "
        f"(mention {_pct(summary.get('jga_mention'))})  "
        f"DTE {_pct(summary.get('dte'))} / floor {_pct(summary.get('dte_floor'))}  "
        f"S.R. {_pct(summary.get('success_rate'))}  {elapsed:5.0f} s"
    )


def evaluate(bench: Path, extra: list[str], root: Path, out: Path) -> tuple[dict[str, Any], float]:
    """``todeval memory eval`` on ``bench`` in process memory; the summary and wall seconds."""
    summary, elapsed, _ = run_cli(
        ["memory", "eval", str(bench), "--bank-backend", "memory", "--checkpoints", ":memory:",
         *extra],
        home=root / "home", out=out,
    )  # fmt: skip
    return summary, elapsed


def main() -> None:
    """Build the benches, evaluate them, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sgd-dir", type=Path, default=data_dir() / "sgd")
    parser.add_argument("--individuals", type=int, default=30, help="per bench (21 items each)")
    parser.add_argument("--fresh-seed", type=int, default=7, help="seed of bench (b)")
    parser.add_argument("--held-out-seed", type=int, default=3, help="seed of bench (c)")
    grid = parser.add_mutually_exclusive_group()
    grid.add_argument("--ablation", action="store_true", help="the grid on bench (a) only")
    grid.add_argument(
        "--baselines", action="store_true", help="the comparison settings on (a) and (a')"
    )
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores")
    dev, train = args.sgd_dir / "sgd_dev.jsonl.gz", args.sgd_dir / "sgd_train.jsonl.gz"
    if not dev.exists():
        print(f"SGD dev not found at {dev}: set TODEVAL_DATA_DIR")
        return
    with tempfile.TemporaryDirectory(prefix="todeval-bench-") as tmp:
        root = Path(tmp)
        benches = [
            ("(a) SGD dev, seed 0", dev, "dev", 0, False),
            ("(a') SGD dev, seed 0, hard re-entry", dev, "dev", 0, True),
            (f"(b) SGD dev, seed {args.fresh_seed}", dev, "dev", args.fresh_seed, False),
        ]
        if train.exists() and not (args.ablation or args.baselines):
            held = root / "sgd_train.jsonl.gz"
            print(f"held-out services: {held_out_sgd(train, held)} SGD train dialogues")
            benches.append(
                ("(c) SGD train, held-out services", held, "train", args.held_out_seed, False)
            )
        if args.ablation:
            benches = benches[:1]
        elif args.baselines:
            benches = benches[:2]
        for label, source, split, seed, hard in benches:
            bench = root / f"{split}_{seed}{'_hard' if hard else ''}.json"
            build(source, split, seed, args.individuals, bench, hard=hard)
            schema = args.sgd_dir / f"schema_{split}.json"
            grids = args.ablation or args.baselines
            for with_schema in (True,) if grids else (True, False):
                extra = ["--schema", str(schema)] if with_schema else []
                if args.ablation:
                    extra.append("--ablation")
                if args.baselines:
                    extra.append("--baselines")
                out = root / f"out_{bench.stem}_{with_schema}"
                if grids:  # the child prints the table itself
                    print(f"{label}, schema:", flush=True)
                summary, elapsed = evaluate(bench, extra, root, out)
                if grids:
                    print(f"({elapsed:.0f} s)\n", flush=True)
                else:
                    tag = "schema" if with_schema else "no schema"
                    print(figures_line(f"{label}, {tag}", summary, elapsed), flush=True)


if __name__ == "__main__":
    main()
