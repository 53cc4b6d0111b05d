"""Benchmark: MAP's memory-active policy on the SGD-dev multi-session benchmark (``make bench``).

Builds the benchmark from SGD dev, then runs ``todeval memory eval --ablation`` (bm25 / dense /
hybrid, with and without the local judger, and without refinement: MAP's Fig. 6 and Table 6
pattern) with local judges everywhere, and prints the table with wall time and peak RSS. The
per-item latency is the whole thread: planning, the reader and the repair loop.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.cli_run import run_cli
from graphs.api import ablation_table
from stores.paths import PROJECT_ROOT, data_dir


def main() -> None:
    """Build the bench, run the grid, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sgd", type=Path, default=data_dir() / "sgd" / "sgd_dev.jsonl.gz")
    parser.add_argument("--schema", type=Path, default=data_dir() / "sgd" / "schema_dev.json")
    parser.add_argument("--items", type=int, default=None, help="only the first N items")
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores")
    if not args.sgd.exists():
        print(f"SGD dev not found at {args.sgd}: set TODEVAL_DATA_DIR")
        return
    with tempfile.TemporaryDirectory(prefix="todeval-bench-") as tmp:
        root = Path(tmp)
        bench = root / "bench.json"
        subprocess.run(
            [sys.executable, "-m", "cli.main", "memory", "build-bench", "--sgd", str(args.sgd),
             "--split", "dev", "--out", str(bench)],
            check=True, cwd=PROJECT_ROOT,
        )  # fmt: skip
        limit = ["--limit", str(args.items)] if args.items else []
        summary, elapsed, rss = run_cli(
            ["memory", "eval", str(bench), "--schema", str(args.schema), "--ablation",
             "--bank-backend", "memory", "--checkpoints", ":memory:", *limit],
            home=root / "home", out=root / "out",
        )  # fmt: skip
        rows = summary["ablation"]
        print(f"SGD-dev memory benchmark, local judges: {rows[0]['items']} items per row")
        print(ablation_table(rows))
        for row in rows:
            print(
                f"  {row['configuration']:34} latency per item p50 {row['latency_ms_p50']} ms, "
                f"p95 {row['latency_ms_p95']} ms, {row['seconds']} s"
            )
        print(f"  whole grid (bank filled once): wall {elapsed:.1f} s, peak RSS {rss:.0f} MB")


if __name__ == "__main__":
    main()
