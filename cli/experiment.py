"""``todeval experiment``: the evaluation's figures as a LangSmith experiment.

Runs the top-level evaluation graph on each record through ``langsmith.evaluate`` with the
project's evaluators (one per figure, plus each figure's corpus value), scoring exactly the
lines ``todeval evaluate`` writes. Offline unless ``LANGSMITH_API_KEY`` is set; then the
records go into a LangSmith dataset and the experiment is uploaded, so two experiments on the
same records line up in LangSmith's comparison view.

With ``--simulate`` the experiment's target is an agent under test instead: each (task, trial)
of ``--domain`` runs live against the simulated user and the domain's tools (as ``todeval
simulate``), and the goal-shift figures score it, so two agents (or two versions of one) on the
same tasks line up side by side.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from todeval.cli.common import (
    UsageError,
    add_judge_arguments,
    add_llm_arguments,
    command_context,
    count,
    fmt_figure,
    input_path,
    parse_suites,
)
from todeval.graphs.api import (
    METRICS,
    SIMULATION_DOMAINS,
    corpus_experiment,
    corpus_key,
    corpus_scores,
    role_defaults,
    simulation_experiment,
)

PREFIX = "todeval-evaluation"


def add_parser(subparsers: Any) -> None:
    """Register ``experiment`` and its options."""
    parser = subparsers.add_parser(
        "experiment",
        help="the evaluation's figures as a LangSmith experiment (uploaded with an API key)",
        description=__doc__,
    )
    parser.add_argument(
        "inputs", nargs="*", metavar="INPUT", help="as for todeval evaluate (not with --simulate)"
    )
    parser.add_argument(
        "--simulate",
        action="store_true",
        help="the target is an agent run live (--domain, --agent, --user, --trials, --tasks)",
    )
    parser.add_argument("--domain", choices=SIMULATION_DOMAINS, help="with --simulate")
    parser.add_argument("--agent", metavar="SPEC", help="with --simulate: the agent under test")
    parser.add_argument("--trials", type=count, default=1, help="with --simulate")
    parser.add_argument("--tasks", default=None, metavar="IDS", help="with --simulate")
    parser.add_argument("--suite", default="all", help="as for todeval evaluate")
    parser.add_argument("--config", default=None, help="todeval.toml with judges and thresholds")
    add_judge_arguments(parser, list(role_defaults()), user=True)
    parser.add_argument("--schema", default=None, help="SGD schema.json naming goals by service")
    parser.add_argument("--prefix", default=PREFIX, help="experiment name prefix")
    parser.add_argument("--dataset", default=None, help="LangSmith dataset name when uploading")
    parser.add_argument("--limit", type=count, default=None, help="only the first N records")
    add_llm_arguments(parser, dry_run=False)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the experiment and print each figure's corpus value."""
    if args.simulate:
        if args.inputs or not args.domain or not args.agent:
            raise UsageError("--simulate takes --domain and --agent, and no INPUT files")
        context = command_context(args).updated(settings={"simulation": {"agent": args.agent}})
        prefix = "todeval-simulation" if args.prefix == PREFIX else args.prefix
        task_ids = [t.strip() for t in args.tasks.split(",") if t.strip()] if args.tasks else None
        results, n_records = simulation_experiment(
            args.domain, context, trials=args.trials, task_ids=task_ids,
            experiment_prefix=prefix, dataset_name=args.dataset,
        )  # fmt: skip
    else:
        if not args.inputs:
            raise UsageError("give one or more INPUT files (or --simulate)")
        results, n_records = corpus_experiment(
            [input_path(raw) for raw in args.inputs],
            command_context(args),
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
