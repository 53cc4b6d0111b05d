"""Benchmark: ``todeval evaluate`` (every local suite) on SGD dev (``make bench``).

Prints, for the whole dev set with the dev schema and local judges:

- wall time and peak RSS cold (a fresh ``TODEVAL_HOME``: empty embedding cache) and warm (the
  same home, new checkpoints, so every record runs again with cached embeddings);
- peak RSS of a tenth of the corpus against the whole of it (memory should not grow with the
  corpus: results stream to disk);
- the overhead of SQLite checkpointing: the evaluation graph in process on the first
  dialogues, with no checkpointer against the runner's SQLite threads (warm cache, best of
  two rounds each).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Sequence
from dataclasses import replace
from itertools import islice
from pathlib import Path
from typing import Any

from bench.cli_run import run_cli
from graphs.api import fmt_figure
from stores.paths import data_dir


def report(label: str, summary: dict[str, Any], elapsed: float, rss_mb: float) -> None:
    """One block of figures."""
    figures = summary["metrics"]
    counts = summary["counts"]
    print(
        f"{label}\n  records {counts['records']} (skipped {counts['skipped_records']}, failed "
        f"{counts['failed_records']}); GSR {fmt_figure(figures.get('gsr'))}, detection F1 "
        f"{fmt_figure(figures.get('goal_detection_f1'))}, status accuracy "
        f"{fmt_figure(figures.get('status_accuracy'))}, dGCR {fmt_figure(figures.get('dgcr'))}\n"
        f"  wall {elapsed:.1f} s (evaluation {summary['elapsed_s']:.1f} s), "
        f"{counts['records'] / summary['elapsed_s']:.1f} records/s, peak RSS {rss_mb:.0f} MB",
        flush=True,
    )


def checkpoint_overhead(sgd: Path, schema: Path, limit: int, home: Path) -> None:
    """The evaluation graph on ``limit`` dialogues: no checkpointer vs the SQLite runner."""
    os.environ["TODEVAL_HOME"] = str(home)  # the warm embedding cache of the runs above
    from evals.datasets.evaluation_records import load_evaluation_records
    from evals.record_views import EvaluationRecord
    from graphs.api import EVALUATE_DEFAULTS
    from graphs.evaluation import EvaluationOutput, build_evaluation_graph
    from graphs.runner import run_corpus
    from nodes.context import Context
    from stores.checkpoint import open_checkpointer

    records = [
        r
        for r in islice(load_evaluation_records(sgd, "sgd", schema_path=schema), limit)
        if isinstance(r, EvaluationRecord)
    ]
    context = replace(
        Context(schema_path=str(schema), escalate_ambiguous=False), **EVALUATE_DEFAULTS
    )

    def graph_input(record: EvaluationRecord) -> dict[str, Any]:
        return {"record": record.model_dump(mode="json")}

    def plain() -> float:
        graph = build_evaluation_graph().compile()
        started = time.perf_counter()
        for record in records:
            graph.invoke(graph_input(record), context=context)
        return time.perf_counter() - started

    def checkpointed(round_: int) -> float:
        path = home / f"overhead-{round_}.sqlite"
        with open_checkpointer(str(path)) as saver:
            graph = build_evaluation_graph().compile(checkpointer=saver)
            started = time.perf_counter()
            for _ in run_corpus(
                graph,
                records,
                subsystem="bench",
                context=context,
                make_input=graph_input,
                output_keys=EvaluationOutput.__annotations__,
            ):
                pass
            return time.perf_counter() - started

    plain()  # warm-up: models loaded, caches filled
    without = min(plain() for _ in range(2))
    with_sqlite = min(checkpointed(n) for n in range(2))
    print(
        f"SQLite checkpointing, {len(records)} dialogues in process (best of 2)\n"
        f"  no checkpointer {without:.1f} s, SQLite runner {with_sqlite:.1f} s: overhead "
        f"{(with_sqlite / without - 1) * 100:.1f}%",
        flush=True,
    )


def main(argv: Sequence[str] | None = None) -> None:
    """Cold and warm whole-dev runs, a tenth of it, then the checkpoint overhead."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sgd", type=Path, default=data_dir() / "sgd" / "sgd_dev.jsonl.gz")
    parser.add_argument("--schema", type=Path, default=data_dir() / "sgd" / "schema_dev.json")
    parser.add_argument("--limit", type=int, default=None, help="only the first N dialogues")
    parser.add_argument("--overhead-dialogues", type=int, default=300)
    args = parser.parse_args(argv)
    print(f"machine: {os.cpu_count()} cores")
    if not args.sgd.exists():
        print(f"SGD dev not found at {args.sgd}: set TODEVAL_DATA_DIR")
        return
    base = ["evaluate", str(args.sgd), "--schema", str(args.schema)]
    limit = ["--limit", str(args.limit)] if args.limit else []
    with tempfile.TemporaryDirectory(prefix="todeval-bench-") as tmp:
        root = Path(tmp)
        home = root / "home"
        cold = run_cli([*base, *limit], home=home, out=root / "cold")
        report("SGD dev, every local suite, cold (empty embedding cache)", *cold)
        warm_args = [*base, *limit, "--checkpoints", str(root / "warm.sqlite")]
        warm = run_cli(warm_args, home=home, out=root / "warm")
        report("SGD dev, every local suite, warm (cached embeddings, new checkpoints)", *warm)
        tenth = max(1, warm[0]["counts"]["records"] // 10)
        small_args = [*base, "--limit", str(tenth), "--checkpoints", str(root / "tenth.sqlite")]
        small = run_cli(small_args, home=home, out=root / "tenth")
        report(f"SGD dev, first {tenth} dialogues (a tenth), warm", *small)
        print(
            f"peak RSS: {small[2]:.0f} MB at {tenth} dialogues, {warm[2]:.0f} MB at "
            f"{warm[0]['counts']['records']} (10x)",
            flush=True,
        )
        checkpoint_overhead(args.sgd, args.schema, args.overhead_dialogues, home)


if __name__ == "__main__":
    main()
