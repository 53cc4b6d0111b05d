"""``todeval compare DIR_A DIR_B``: every metric of two ``todeval evaluate`` runs side by side.

Reads both runs' ``results.jsonl`` (one line per record, streamed) and joins them by
``record_id``. Each run's figure gets a percentile bootstrap interval over its own records; the
difference ``B - A`` a paired bootstrap over the records both runs have a part for
(:mod:`evals.metrics.bootstrap`). Prints the table and writes ``OUT/compare.json`` (every figure)
and ``OUT/compare.html`` (the table, the records that changed most per metric, the records in one
run only and both runs' judges).
"""

from __future__ import annotations

import argparse
from typing import Any

from todeval.cli.common import add_gate_arguments, count, gate, writable_folder
from todeval.graphs.api import compare_folders, difference_figures, text_table


def add_parser(subparsers: Any) -> None:
    """Register ``compare`` and its options."""
    parser = subparsers.add_parser(
        "compare",
        help="compare two `todeval evaluate` runs: every metric with bootstrap 95%% intervals",
        description=(
            "Join two `todeval evaluate` output folders by record id and compare every metric: "
            "each run's figure with a percentile bootstrap 95% interval, the difference B - A "
            "with a paired bootstrap interval over the records both runs scored (better / worse "
            "when it excludes 0), and the records that changed most. Prints the table and "
            "writes OUT/compare.json and OUT/compare.html."
        ),
    )
    parser.add_argument("dir_a", metavar="DIR_A", help="output folder of the baseline run (A)")
    parser.add_argument("dir_b", metavar="DIR_B", help="output folder of the run compared (B)")
    parser.add_argument(
        "--out", type=writable_folder, default=None, help="output folder (default: DIR_B/compare)"
    )
    parser.add_argument("--resamples", type=count, default=1000, help="bootstrap resamples")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (same seed, same CIs)")
    parser.add_argument(
        "--top", type=count, default=10, help="records listed per metric as changed most"
    )
    add_gate_arguments(parser, what="a difference B - A (gsr=-0.05: a drop of over 5 points)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Compare the runs, print the table, write compare.json and compare.html."""
    comparison, out = compare_folders(
        args.dir_a, args.dir_b, out=args.out, resamples=args.resamples, seed=args.seed, top=args.top
    )
    print(text_table(comparison))
    records = comparison["records"]
    print(
        f"{records['both']} records in both runs, {len(records['only_a'])} only in A, "
        f"{len(records['only_b'])} only in B; "
        f"wrote {out / 'compare.json'} and {out / 'compare.html'}"
    )
    if not records["both"]:
        return 1
    return gate(args, lambda: difference_figures(comparison), 0)
