"""Benchmark: the full local GSR pipeline (segmentation + 3 teachers + vote) (``make bench``).

SGD dev: ``todeval goal-success`` cold (fresh ``TODEVAL_HOME``: no embedding cache, no checkpoints)
and warm (embedding cache kept, new checkpoints); goals/s and peak RSS of the child process. SGD has
no quality labels, so only throughput and label shares are meaningful there. The bundled samples
have gold ``quality``/``rcof``: GSR, RCOF distribution, each teacher's and the vote's accuracy and
Cohen's kappa, and the share of ambiguous turns. Escalation is off here (a benchmark has no human to
ask); ambiguous turns are counted. Figures only; nothing here is a test.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path
from typing import Any

from bench.cli_run import run_cli
from bench.internals import PROJECT_ROOT, data_dir
from todeval.graphs.api import fmt_figure

SAMPLES = ("enterprise_dialogues.jsonl", "heldout_dialogues.jsonl")


def report(label: str, summary: dict[str, Any], elapsed: float, rss_mb: float) -> None:
    """One block of figures."""
    counts = summary["counts"]
    rcof = ", ".join(f"{code} {n}" for code, n in summary["rcof"].items())
    print(
        f"{label}\n"
        f"  dialogues {counts['dialogues']}, turns {counts['turns']}, goals {summary['n_goals']}"
        f" (undecided {summary['undecided_goals']}), skipped {counts['skipped_records']}\n"
        f"  GSR {fmt_figure(summary['gsr'])}  single-turn "
        f"{fmt_figure(summary['gsr_single_turn'])}  multi-turn "
        f"{fmt_figure(summary['gsr_multi_turn'])}  fractional "
        f"{fmt_figure(summary['fractional_credit'])}  last-turn "
        f"{fmt_figure(summary['last_turn_success_rate'])}\n"
        f"  RCOF of failed goals: {rcof}, unattributed {summary['rcof_unattributed']}\n"
        f"  ambiguous turns {summary['ambiguous']} (share "
        f"{fmt_figure(summary['ambiguous_share'])}); Fleiss kappa (quality) "
        f"{fmt_figure(summary['teacher_kappa']['quality']['fleiss_kappa'])}\n"
        f"  wall {elapsed:.1f} s (incl. start-up), {summary['n_goals'] / elapsed:.1f} goals/s, "
        f"{counts['turns'] / elapsed:.0f} turns/s, peak RSS {rss_mb:.0f} MB",
        flush=True,
    )
    gold = summary.get("gold_agreement")
    if not gold:
        return
    rows = [(t["judge"], t) for t in gold["teachers"]] + [("vote", gold["vote"])]
    for name, figures in rows:
        quality, cause = figures["quality"], figures["rcof"]
        print(
            f"    {name:<16} quality acc {fmt_figure(quality['accuracy'])} kappa "
            f"{fmt_figure(quality['kappa'])} (n {quality['n']}); rcof acc "
            f"{fmt_figure(cause['accuracy'])} coverage {fmt_figure(cause['coverage'])} "
            f"(n {cause['n']})"
        )


def gsr(source: Path, home: Path, out: Path, limit: int | None) -> tuple[Any, float, float]:
    """``todeval goal-success`` with the default local judges and escalation off."""
    arguments = ["goal-success", str(source), "--no-escalation"]
    if limit:
        arguments += ["--limit", str(limit)]
    return run_cli(arguments, home=home, out=out)


def main() -> None:
    """Cold and warm on SGD dev; quality figures on the bundled samples."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--limit", type=int, default=None, help="only the first N SGD dialogues")
    parser.add_argument("--sgd", type=Path, default=data_dir() / "sgd" / "sgd_dev.jsonl.gz")
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory(prefix="todeval-bench-") as tmp:
        root = Path(tmp)
        for name in SAMPLES:
            sample = PROJECT_ROOT / "data" / "samples" / name
            if sample.exists():
                result = gsr(sample, root / "sample-home", root / name, None)
                report(f"bundled sample {name}, local teachers", *result)
        if not args.sgd.exists():
            print(f"SGD dev not found at {args.sgd}: set TODEVAL_DATA_DIR")
            return
        home = root / "home"
        result = gsr(args.sgd, home, root / "cold", args.limit)
        report("SGD dev, full local pipeline, cold: empty embedding cache", *result)
        for leftover in home.glob("checkpoints.sqlite*"):
            leftover.unlink()
        result = gsr(args.sgd, home, root / "warm", args.limit)
        report("SGD dev, full local pipeline, warm: embedding cache kept, new checkpoints", *result)


if __name__ == "__main__":
    main()
