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
from dataclasses import replace
from itertools import islice
from typing import Any

from cli.common import fmt_figure, input_path
from cli.evaluate_lines import SuiteTallies
from cli.evaluate_setup import (
    check_judges,
    command_context,
    corpus_records,
    detect_kinds,
    parse_suites,
    run_context,
)
from evals.langsmith_suite_evaluators import corpus_key
from evals.metrics.record_metrics import METRICS
from evals.record_views import EvaluationRecord
from graphs.experiments import evaluation_experiment
from graphs.runner import ThreadResult


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
    suites = parse_suites(args.suite)
    context = command_context(args.config, args.judge, args.schema)
    inputs = list(zip(sources, detect_kinds(sources), strict=True))
    context = replace(run_context(context, inputs, args.limit), escalate_ambiguous=False)
    check_judges(context, suites)
    records = [
        r
        for r in islice(corpus_records(inputs, context.schema_path, None), args.limit)
        if isinstance(r, EvaluationRecord)
    ]
    tallies = SuiteTallies(context)

    def to_line(record: EvaluationRecord, output: dict[str, Any]) -> dict[str, Any]:
        return tallies.add(record, ThreadResult(record.record_id, record.record_id, output))

    results = evaluation_experiment(
        records,
        context=context,
        suites=suites,
        experiment_prefix=args.prefix,
        to_line=to_line,
        dataset_name=args.dataset,
    )
    scores = _corpus_scores(results)
    uploaded = bool(os.environ.get("LANGSMITH_API_KEY"))
    for name, info in METRICS.items():
        if scores.get(corpus_key(name)) is not None:
            print(f"{info.label:28} {fmt_figure(scores[corpus_key(name)])}")
    where = f"uploaded as {results.experiment_name}" if uploaded else "offline, not uploaded"
    print(f"experiment over {len(records)} records: {where}")
    return 0 if records else 1


def _corpus_scores(results: Any) -> dict[str, float | None]:
    """The summary evaluators' scores, by feedback key (after every row has finished)."""
    for _ in results:  # the summary is computed once the rows are consumed
        pass
    summary = results._summary_results or {"results": []}  # langsmith keeps it private
    return {feedback.key: feedback.score for feedback in summary["results"]}
