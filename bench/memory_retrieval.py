"""Benchmark: memory activation on the SGD-built MS-TOD-style bench (paper 001, Table 12).

Builds the bench from SGD (``build_memory_bench``, timed), stores every individual's local QA
units (one per task-goal slot) in a :class:`~stores.memory_bank.MemoryBank`, and queries each
eval item's context (the re-entry sentence + the user's utterance) against its individual's
bank in ``dense``, ``bm25`` and ``hybrid`` mode. Prints Recall@3/5/10 (capped, see
``evals.metrics.memory.scores``), hit@5 and the search latency. No judger, no re-rank: this is the
activation step alone. Figures only, not a test.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Sequence
from statistics import fmean, median

from bench.internals import (
    RETRIEVAL_MODES,
    MemoryBank,
    MemoryBench,
    data_dir,
    hit_at_k,
    local_memory_units,
    recall_at_k,
)
from todeval.graphs.api import build_memory_bench


def fill(bank: MemoryBank, bench: MemoryBench) -> float:
    """Store every individual's local units; return the seconds it took."""
    began = time.perf_counter()
    for individual in bench.individuals:
        units = [
            unit
            for session in individual.sessions
            for unit in local_memory_units(individual.individual_id, session)
        ]
        bank.add_units(units)
    return time.perf_counter() - began


def evaluate(bank: MemoryBank, bench: MemoryBench) -> None:
    """Print one line of figures per retrieval mode."""
    for mode in RETRIEVAL_MODES:
        recalls: dict[int, list[float]] = {3: [], 5: [], 10: []}
        hits: list[float] = []
        latencies: list[float] = []
        for individual in bench.individuals:
            units = bank.units(individual.individual_id)
            for item in individual.eval:
                query = " ".join(turn.utterance for turn in item.context)
                began = time.perf_counter()
                found = bank.search(individual.individual_id, query, 10, mode)
                latencies.append(time.perf_counter() - began)
                ranked = [unit.unit_id for unit, _ in found]
                relevant = item.relevant_session_ids
                count = sum(unit.session_id in relevant for unit in units)
                for k, values in recalls.items():
                    value = recall_at_k(ranked, relevant, k, relevant_units=count)
                    if value is not None:
                        values.append(value)
                hits.append(hit_at_k(ranked, relevant, 5))
        print(
            f"{mode:7s} recall@3 {fmean(recalls[3]):.3f}  recall@5 {fmean(recalls[5]):.3f}  "
            f"recall@10 {fmean(recalls[10]):.3f}  hit@5 {fmean(hits):.3f}  "
            f"search median {median(latencies) * 1000:.1f} ms  items {len(hits)}"
        )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sgd", default=str(data_dir() / "sgd"))
    parser.add_argument("--split", default="dev")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--individuals", type=int, default=None)
    parser.add_argument("--backend", choices=("memory", "chroma"), default="memory")
    args = parser.parse_args(argv)

    began = time.perf_counter()
    bench = build_memory_bench(args.sgd, args.split, seed=args.seed, individuals=args.individuals)
    built = time.perf_counter() - began
    sessions = sum(len(i.sessions) for i in bench.individuals)
    items = sum(len(i.eval) for i in bench.individuals)
    print(
        f"build_memory_bench {args.split}: {len(bench.individuals)} individuals, "
        f"{sessions} sessions, {items} eval items in {built:.2f} s"
    )
    with tempfile.TemporaryDirectory() as folder:
        bank = MemoryBank(folder if args.backend == "chroma" else None, backend=args.backend)
        seconds = fill(bank, bench)
        print(f"bank ({args.backend}): {bank.count()} units stored in {seconds:.1f} s")
        evaluate(bank, bench)


if __name__ == "__main__":
    main()
