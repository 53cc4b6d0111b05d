"""Benchmark: ATOD goal tracking with local judges on SGD dev (``make bench``).

``todeval goal-tracking`` with the dev schema: goal detection F1 and status accuracy against the
gold derived from SGD's dialogue acts, dGCR against gold dGCR, memory recall, and per-utterance
latency, with D_vec in process (numpy) over the whole dev set and in Chroma on the first 300
dialogues. Figures only; nothing here is a test.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path
from typing import Any

from bench.cli_run import run_cli
from graphs.api import fmt_figure
from stores.paths import data_dir


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
        f"{fmt_figure(summary['status_accuracy'])}; memory recall "
        f"{fmt_figure(summary['memory_recall_accuracy'])}\n"
        f"  dGCR {fmt_figure(summary['dgcr'])} (gold {fmt_figure(summary['dgcr_gold'])}); NTC "
        f"{fmt_figure(summary['ntc'])} (gold {fmt_figure(summary['ntc_gold'])})\n"
        f"  latency per utterance p50 {fmt_figure(summary['latency_ms_p50'])} ms, p95 "
        f"{fmt_figure(summary['latency_ms_p95'])} ms; wall {elapsed:.1f} s, peak RSS "
        f"{rss_mb:.0f} MB",
        flush=True,
    )


def main() -> None:
    """Whole dev set in process; Chroma on a slice."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sgd", type=Path, default=data_dir() / "sgd" / "sgd_dev.jsonl.gz")
    parser.add_argument("--schema", type=Path, default=data_dir() / "sgd" / "schema_dev.json")
    parser.add_argument("--limit", type=int, default=None, help="only the first N dialogues")
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores")
    if not args.sgd.exists():
        print(f"SGD dev not found at {args.sgd}: set TODEVAL_DATA_DIR")
        return
    base = ["goal-tracking", str(args.sgd), "--schema", str(args.schema)]
    with tempfile.TemporaryDirectory(prefix="todeval-bench-") as tmp:
        root = Path(tmp)
        limit = ["--limit", str(args.limit)] if args.limit else []
        result = run_cli(
            [*base, "--vector-backend", "memory", *limit], home=root / "home", out=root / "memory"
        )
        report("SGD dev, local judges, D_vec in process", *result)
        result = run_cli(
            [*base, "--vector-backend", "chroma", "--limit", str(args.limit or 300)],
            home=root / "home",
            out=root / "chroma",
        )
        report("SGD dev (first dialogues), local judges, D_vec in Chroma", *result)


if __name__ == "__main__":
    main()
