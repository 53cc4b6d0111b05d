"""Benchmark: MAP's proactive slot repair loop with local judges (paper 001, §4.3, Table 4).

Builds MS-TOD-style benches from SGD (``build_memory_bench``, timed): (a) SGD dev with seed 0,
(b) SGD dev with ``--fresh-seed``, (c) SGD train restricted to the held-out services of
:mod:`bench.memory_active`; and runs the first ``--items`` eval items of each through
:data:`graphs.memory.slot_repair_graph` with the default local judges
(``local:proactive`` agent, ``local`` templated user, ``local:mention`` supervisor), once per
disclosure tier of the simulated user, for two kinds of confirmation response r:

- the SGD CONFIRM utterance itself (mostly right, so few items need repair);
- a template confirmation that drops 25% and garbles 15% of the gold slots (a garbled value is
  another item's value for the same slot), so the loop has work to do.

Prints slot accuracy and JGA of r before repair, DTE and S.R. after (DTE counts the
confirmation as turn 1, see :mod:`graphs.memory`), DTE over the items that needed repair,
and the per-item latency. Figures only, not a test.
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from statistics import fmean
from typing import Any

from bench.internals import (
    MsTodEvalItem,
    data_dir,
    dialogue_turn_efficiency,
    joint_goal_accuracy,
    slot_accuracy,
    slot_in_words,
)
from bench.memory_active import held_out_sgd
from todeval.graphs.api import Context, DatasetFormatError, build_memory_bench, fmt_figure
from todeval.graphs.api import slot_repair_graph as graph

DROP, GARBLE = 0.25, 0.15  # share of gold slots the template confirmation drops / garbles
DISCLOSURE = ("high", "medium", "low")

Confirm = Callable[[MsTodEvalItem, random.Random], str]


def garble(value: str, pool: Sequence[str], rng: random.Random) -> str:
    """Another value seen for the slot (a plausible wrong one), else the value marked unsure."""
    others = [v for v in pool if v.lower() != value.lower()]
    return rng.choice(others) if others else value + " (unsure)"


def confirmation(
    goal: Mapping[str, str], pool: Mapping[str, Sequence[str]], rng: random.Random
) -> str:
    """A template confirmation of ``goal`` with some slots dropped and some garbled."""
    parts = []
    for slot, value in goal.items():
        draw = rng.random()
        if draw < DROP:
            continue
        stated = garble(value, pool.get(slot, []), rng) if draw < DROP + GARBLE else value
        parts.append(f"the {slot_in_words(slot)} is {stated}")
    if not parts:
        return "Shall I go ahead?"
    return "Just to confirm: " + "; ".join(parts) + ". Is that correct?"


def _percentile(sorted_values: Sequence[float], share: float) -> float:
    return sorted_values[min(int(len(sorted_values) * share), len(sorted_values) - 1)]


def run(label: str, make: Confirm, items: Sequence[MsTodEvalItem], disclosure: str) -> None:
    """Repair every item's confirmation once; print one line of figures."""
    rng = random.Random(0)
    before: list[tuple[float | None, float | None]] = []
    outputs: list[dict[str, Any]] = []
    latencies: list[float] = []
    for index, item in enumerate(items):
        response = make(item, rng)
        began = time.perf_counter()
        out = graph.invoke(
            {
                "context": [turn.model_dump() for turn in item.context],
                "task_goal": item.task_goal,
                "response": response,
                "intent": item.intent,
                "persona": {"disclosure": disclosure, "seed": index},
            },
            context=Context(),
        )
        latencies.append(time.perf_counter() - began)
        before.append(
            (slot_accuracy(item.task_goal, response), joint_goal_accuracy(item.task_goal, response))
        )
        outputs.append(out)
    accuracy = fmean(a for a, _ in before if a is not None)
    jga = fmean(j for _, j in before if j is not None)
    judged = [o for o in outputs if o["dte"] is not None and o["success"] is not None]
    dte = dialogue_turn_efficiency(o["dte"] for o in judged)
    success = fmean(float(o["success"]) for o in judged) if judged else float("nan")
    needing = [o for o in judged if o["initial_missing"]]
    dte_needing = dialogue_turn_efficiency(o["dte"] for o in needing)
    latencies.sort()
    median, p95 = (_percentile(latencies, share) * 1000 for share in (0.5, 0.95))
    print(
        f"{label:38s} {disclosure:6s} n={len(outputs)} (judged {len(judged)}) "
        f"slot_acc(r)={accuracy:.3f} JGA(r)={jga:.3f} DTE={fmt_figure(dte, 2)} "
        f"S.R.={success:.3f} | "
        f"needing repair {len(needing)}, DTE there {fmt_figure(dte_needing, 2)} | "
        f"latency median {median:.1f} ms p95 {p95:.1f} ms",
        flush=True,
    )


def main(argv: Sequence[str] | None = None) -> None:
    """Build the benches from SGD, then repair reference and template confirmations."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", type=int, default=300, help="the first N eval items")
    parser.add_argument("--sgd", type=Path, default=data_dir() / "sgd")
    parser.add_argument("--fresh-seed", type=int, default=7, help="seed of bench (b)")
    parser.add_argument("--held-out-seed", type=int, default=3, help="seed of bench (c)")
    args = parser.parse_args(argv)
    print(f"machine: {os.cpu_count()} cores ({len(os.sched_getaffinity(0))} usable)")
    if not args.sgd.exists():
        print(f"SGD not found at {args.sgd}: set TODEVAL_DATA_DIR")
        return
    with tempfile.TemporaryDirectory(prefix="todeval-bench-") as tmp:
        held = Path(tmp) / "sgd_train.jsonl.gz"
        train = args.sgd / "sgd_train.jsonl.gz"
        benches = [("(a) dev, seed 0", args.sgd, "dev", 0)]
        benches.append((f"(b) dev, seed {args.fresh_seed}", args.sgd, "dev", args.fresh_seed))
        if train.exists():
            held_out_sgd(train, held)
            benches.append(("(c) train, held-out services", held, "train", args.held_out_seed))
        for label, source, split, seed in benches:
            print(f"== {label}")
            repair_bench(source, split, seed, args.items)


def repair_bench(source: Path, split: str, seed: int, limit: int) -> None:
    """Build one bench and repair its first ``limit`` items' confirmations."""
    began = time.perf_counter()
    try:
        bench = build_memory_bench(source, split, seed=seed, individuals=1 + limit // 21)
    except DatasetFormatError as error:
        print(f"SGD {split} not readable at {source}: {error}")
        return
    built = time.perf_counter() - began
    every = [item for individual in bench.individuals for item in individual.eval]
    print(
        f"build_memory_bench {split}: {len(bench.individuals)} individuals, "
        f"{len(every)} eval items in {built:.1f} s; repairing the first {limit}"
    )
    items = every[:limit]
    pool: dict[str, list[str]] = {}
    for item in items:
        for slot, value in item.task_goal.items():
            pool.setdefault(slot, []).append(value)
    confirmations: tuple[tuple[str, Confirm], ...] = (
        ("reference (SGD CONFIRM utterance)", lambda item, rng: item.reference_response),
        (
            f"template, drop {DROP:.0%} / garble {GARBLE:.0%}",
            lambda item, rng: confirmation(item.task_goal, pool, rng),
        ),
    )
    for label, make in confirmations:
        for disclosure in DISCLOSURE:
            run(label, make, items, disclosure)


if __name__ == "__main__":
    main()
