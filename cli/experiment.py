"""``todeval experiment``: the evaluation's figures as a LangSmith experiment.

Runs the top-level evaluation graph on each record through ``langsmith.evaluate`` with the
project's evaluators (one per figure, plus each figure's corpus value), scoring exactly the
lines ``todeval evaluate`` writes. Offline unless ``LANGSMITH_API_KEY`` is set; then the
records go into a LangSmith dataset and the experiment is uploaded, so two experiments on the
same records line up in LangSmith's comparison view.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from cli.common import command_context, fmt_figure, input_path, parse_suites
from graphs.api import METRICS, corpus_experiment, corpus_key, corpus_scores


def add_parser(subparsers: Any) -> None:
    """Register ``experiment`` and its options."""
    parser = subparsers.add_parser(
        "experiment",
        help="the evaluation's figures as a LangSmith experiment (uploaded with an API key)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("inputs", nargs="+", metavar="INPUT", help="as for todeval evaluate")
    parser.add_argument("--suite", default="all", help="as for todeval evaluate")
    parser.add_argument("--config", default=None, help="todeval.toml with judges and thresholds")
    parser.add_argument("--judge", action="append", default=[], metavar="ROLE=SPEC")
    parser.add_argument("--schema", default=None, help="SGD schema.json naming goals by service")
    parser.add_argument("--prefix", default="todeval-evaluation", help="experiment name prefix")
    parser.add_argument("--dataset", default=None, help="LangSmith dataset name when uploading")
    parser.add_argument("--limit", type=int, default=None, help="only the first N records")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the experiment and print each figure's corpus value."""
    sources = [input_path(raw) for raw in args.inputs]
    results, n_records = corpus_experiment(
        sources,
        command_context(args.config, args.judge, args.schema),
        suites=parse_suites(args.suite),
        limit=args.limit,
        experiment_prefix=args.prefix,
        dataset_name=args.dataset,
    )
    scores = corpus_scores(results)
    for name, info in METRICS.items():
        if scores.get(corpus_key(name)) is not None:
            print(f"{info.label:28} {fmt_figure(scores[corpus_key(name)])}")
    uploaded = bool(os.environ.get("LANGSMITH_API_KEY"))
    where = f"uploaded as {results.experiment_name}" if uploaded else "offline, not uploaded"
    print(f"experiment over {n_records} records: {where}")
    return 0 if n_records else 1
