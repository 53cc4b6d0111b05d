"""Benchmark: local goal segmentation on SGD dev and on the bundled sample (``make bench``).

Each configuration runs ``todeval segment`` in a fresh process with a fresh ``TODEVAL_HOME``
(cold: no embedding cache, no checkpoints), then once more with the embedding cache kept but
new checkpoints (warm). Prints precision/recall/F1 of ``is_new_goal``, turns/s and the child
process's peak RSS. Figures only; nothing here is a test.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path
from typing import Any

from bench.cli_run import run_cli
from graphs.api import fmt_figure
from stores.paths import PROJECT_ROOT, data_dir


def run_segment(
    source: Path, judge: str, home: Path, out: Path, limit: int | None
) -> tuple[dict[str, Any], float, float]:
    """Run ``todeval segment``; return its summary, wall seconds and peak RSS in MB."""
    arguments = ["segment", str(source), "--judge", judge]
    if limit:
        arguments += ["--limit", str(limit)]
    return run_cli(arguments, home=home, out=out)


def report(label: str, summary: dict[str, Any], elapsed: float, rss_mb: float) -> None:
    """One block of figures."""
    counts, metrics = summary["counts"], summary["metrics"] or {}

    def fmt(key: str) -> str:
        return fmt_figure(metrics.get(key))

    print(
        f"{label}\n"
        f"  dialogues {counts['dialogues']}, turns {counts['turns']}, skipped "
        f"{counts['skipped_records']}\n"
        f"  precision {fmt('precision')}  recall {fmt('recall')}  F1 {fmt('f1')}  "
        f"exact {fmt('exact_segmentation_rate')}  Pk {fmt('pk')}  WindowDiff {fmt('window_diff')}\n"
        f"  wall {elapsed:.1f} s (incl. start-up), {counts['turns'] / elapsed:.0f} turns/s, "
        f"peak RSS {rss_mb:.0f} MB",
        flush=True,
    )


def main() -> None:
    """Cold and warm runs of ``local`` on SGD dev; ``local`` and ``local:rules`` on the sample."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--limit", type=int, default=None, help="only the first N SGD dialogues")
    parser.add_argument("--sgd", type=Path, default=data_dir() / "sgd" / "sgd_dev.jsonl.gz")
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores")
    sample = PROJECT_ROOT / "data" / "samples" / "enterprise_dialogues.jsonl"
    with tempfile.TemporaryDirectory(prefix="todeval-bench-") as tmp:
        root = Path(tmp)
        if args.sgd.exists():
            home = root / "home"
            result = run_segment(args.sgd, "local", home, root / "cold", args.limit)
            report("SGD dev, local (learned), cold: empty embedding cache", *result)
            for leftover in home.glob("checkpoints.sqlite*"):
                leftover.unlink()
            result = run_segment(args.sgd, "local", home, root / "warm", args.limit)
            report("SGD dev, local (learned), warm: embedding cache kept, new checkpoints", *result)
            result = run_segment(args.sgd, "local:rules", home, root / "rules", args.limit)
            report("SGD dev, local:rules (untrained baseline), warm", *result)
        else:
            print(f"SGD dev not found at {args.sgd}: set TODEVAL_DATA_DIR")
        for judge in ("local", "local:rules"):
            result = run_segment(sample, judge, root / "home", root / f"sample-{judge}", None)
            report(f"bundled enterprise sample (other domain), {judge}", *result)


if __name__ == "__main__":
    main()
