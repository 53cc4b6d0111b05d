"""``todeval memory``: MAP's memory-active policy on a multi-session benchmark (paper 001).

``memory build-bench`` writes the benchmark from SGD (``--hard``: re-entry lines that name no
stored value); ``memory eval`` stores each individual's sessions in a memory bank and runs the
memory graph on every item (``--setting``: one of the paper's comparison settings instead of
MAP; ``--baselines``: all of them; ``--ablation``: the retrieval x judger grid). The work is
:mod:`graphs.corpus.memory`; this module parses and prints.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any, get_args

from todeval.cli.common import (
    UsageError,
    add_judge_arguments,
    add_llm_arguments,
    add_renamed_option,
    command_judges,
    count,
    fmt_figure,
    input_path,
    progress,
    with_llm_settings,
    writable_file,
    writable_folder,
)
from todeval.evals.results import skipped_row
from todeval.evals.schema import RecordError
from todeval.graphs.api import (
    ABLATION_RETRIEVAL,
    ACTIVATIONS,
    BASELINE_SOURCES,
    INTENTS_PER_INDIVIDUAL,
    MEMORY_SETTINGS,
    SESSIONS_PER_INTENT,
    Context,
    MemorySettings,
    ablation_table,
    baseline_table,
    build_memory_bench,
    check_memory_judges,
    collection_for,
    dump_memory_bench,
    eval_records,
    fill_banks,
    load_memory_input,
    memory_ablation,
    memory_baselines,
    memory_corpus,
    write_json,
)


def add_parser(subparsers: Any) -> None:
    """Register ``memory`` with its ``build-bench`` and ``eval`` subcommands."""
    memory = subparsers.add_parser(
        "memory",
        help="multi-session memory: build the benchmark, evaluate MAP on it",
        description="MAP / MS-TOD (paper 001): memory-active responses and slot repair.",
    )
    commands = memory.add_subparsers(dest="memory_command", metavar="SUBCOMMAND", required=True)
    add_build_bench_parser(commands)
    add_eval_parser(commands)


def add_eval_parser(subparsers: Any) -> None:
    """Register ``eval``."""
    defaults = Context()
    parser = subparsers.add_parser(
        "eval",
        help="evaluate the memory-active policy on a benchmark file",
        description=(
            "Load each individual's stored sessions into a memory bank (QA units), then for "
            "every evaluation item capture the intent, activate memory, ask the missing-slot "
            "query, judge and re-rank the units, refine them, write the confirmation and repair "
            "its slots with a simulated user. Writes OUT/items.jsonl and OUT/summary.json."
        ),
    )
    parser.add_argument(
        "bench",
        help="benchmark JSON (from `todeval memory build-bench`) or one individual's MS-TOD "
        "session file (Figure 12)",
    )
    parser.add_argument(
        "--qa-memory", default=None, help="MS-TOD QA memory JSON (Figure 13) for that file"
    )
    parser.add_argument("--out", required=True, type=writable_folder, help="output folder")
    parser.add_argument(
        "--retrieval",
        choices=ABLATION_RETRIEVAL,
        default=MemorySettings.of(defaults).retrieval,
        help=MemorySettings.model_fields["retrieval"].description,
    )
    parser.add_argument(
        "--alpha", type=float, default=MemorySettings.of(defaults).alpha, help="re-rank weight"
    )
    parser.add_argument(
        "--top-k",
        type=count,
        default=MemorySettings.of(defaults).top_k,
        help=MemorySettings.model_fields["top_k"].description,
    )
    parser.add_argument(
        "--no-refine", action="store_true", help="give the reader questions and answers"
    )
    parser.add_argument(
        "--activation",
        choices=ACTIVATIONS,
        default=MemorySettings.of(defaults).activation,
        help="intent_key: match the sessions' intent keys (the paper's); qa: rank QA units",
    )
    parser.add_argument(
        "--setting",
        choices=sorted(MEMORY_SETTINGS),
        default=MemorySettings.of(defaults).setting,
        help="what the reader is given: MAP or one of the paper's comparison settings",
    )
    parser.add_argument(
        "--bank-source",
        choices=get_args(MemorySettings.model_fields["bank_source"].annotation),
        default=MemorySettings.of(defaults).bank_source,
        help="what the local bank builder stores of each session: dialogue (the values said) "
        "or task_goal_oracle (the task goal, an oracle memory on MS-TOD-style benches)",
    )
    add_judge_arguments(
        parser,
        [
            "memory_bank",
            "intent_capture",
            "missing_slot_query",
            "memory_judger",
            "reader",
            "gpt4_score",
            "memory_summarizer",
        ],
        aliases={
            "--judger": "memory_judger",
            "--reader": "reader",
            "--scorer": "gpt4_score",
            "--summarizer": "memory_summarizer",
            "--planner": ("intent_capture", "missing_slot_query"),
            "--bank-builder": "memory_bank",
        },
    )
    parser.add_argument("--schema", default=None, help="SGD schema.json (task attributes)")
    parser.add_argument(
        "--disclosure",
        choices=["high", "medium", "low"],
        default="high",
        help="how much the simulated user gives per answer in the repair loop",
    )
    # ProactiveEval's agreeableness means another thing (resistance to guidance).
    add_renamed_option(parser, "--agreeableness", "--disclosure", choices=["high", "medium", "low"])
    parser.add_argument(
        "--bank-backend",
        choices=["chroma", "memory"],
        default=MemorySettings.of(defaults).bank_backend,
        help=MemorySettings.model_fields["bank_backend"].description,
    )
    parser.add_argument(
        "--checkpoints",
        default=None,
        help="SQLite file or postgresql://user@host:port/db (shared by workers; the cluster "
        "extra) for the checkpoints (default .todeval/checkpoints.sqlite; ':memory:' for none)",
    )
    parser.add_argument("--limit", type=count, default=None, help="only the first N items")
    parser.add_argument(
        "--ablation",
        action="store_true",
        help="run the grid: bm25/dense/hybrid x judger on/off, and hybrid+judger without "
        "refinement; writes OUT/ablation.json (and the same rows in OUT/summary.json)",
    )
    parser.add_argument(
        "--baselines",
        action="store_true",
        help="run MAP and every comparison setting of the paper over the items; writes "
        "OUT/baselines.json, and OUT/summary.json with MAP's figures and the same rows",
    )
    add_llm_arguments(parser, dry_run=False)
    parser.set_defaults(run=run_eval)


def run_eval(args: argparse.Namespace) -> int:
    """Evaluate one configuration (or the ablation grid) and write the outputs."""
    source = input_path(args.bench)
    context = with_llm_settings(
        Context(
            judges=command_judges(args),
            schema_path=str(input_path(args.schema)) if args.schema else None,
            settings={
                "memory": {
                    "retrieval": args.retrieval,
                    "alpha": args.alpha,
                    "top_k": args.top_k,
                    "refine": not args.no_refine,
                    "activation": args.activation,
                    "setting": args.setting,
                    "bank_source": args.bank_source,
                    "bank_backend": args.bank_backend,
                    "bank_collection": collection_for([source]),
                }
            },
        ),
        args,
    )
    check_memory_judges(context, judgers=("local",) if args.ablation else ())
    bench, errors = load_memory_input(source)
    args.out.mkdir(parents=True, exist_ok=True)
    qa_memory = input_path(args.qa_memory) if args.qa_memory else None
    if qa_memory is not None and len(bench.individuals) != 1:
        raise UsageError("--qa-memory goes with one individual's MS-TOD session file")
    fill_banks(
        bench,
        context,
        qa_memory=qa_memory,
        report=print,
        progress=lambda items: progress(items, "memory banks", "individual"),
        sources=BASELINE_SOURCES if args.baselines else (),
    )
    records = list(eval_records(bench))[: args.limit]
    if args.baselines:
        rows = memory_baselines(
            records, context, disclosure=args.disclosure, checkpoints=args.checkpoints,
            progress=progress,
        )  # fmt: skip
        write_json(args.out / "baselines.json", rows)
        write_json(args.out / "summary.json", rows[0] | {"baselines": rows})  # MAP's, then all
        print(baseline_table(rows))
        return 0
    if args.ablation:
        rows = memory_ablation(
            records, context, disclosure=args.disclosure, checkpoints=args.checkpoints,
            progress=progress,
        )  # fmt: skip
        write_json(args.out / "ablation.json", rows)
        write_json(args.out / "summary.json", {"ablation": rows})
        print(ablation_table(rows))
        return 0
    summary = memory_corpus(
        records, context, out=args.out, disclosure=args.disclosure,
        checkpoints=args.checkpoints, progress=progress,
    )  # fmt: skip
    summary["skipped_records"] = [skipped_row(error) for error in errors]
    write_json(args.out / "summary.json", summary)
    print(
        f"evaluated {summary['items']} items: Recall@5 {fmt_figure(summary['recall_at_5'])}, "
        f"slot accuracy {fmt_figure(summary['slot_accuracy'])}, JGA "
        f"{fmt_figure(summary['jga'])} (by mention {fmt_figure(summary['jga_mention'])}), DTE "
        f"{fmt_figure(summary['dte'])}, success {fmt_figure(summary['success_rate'])}, GPT-4 "
        f"score {fmt_figure(summary['gpt4_score'])}; {len(errors)} skipped; "
        f"wrote {args.out / 'items.jsonl'} and {args.out / 'summary.json'}"
    )
    return 0


def add_build_bench_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``build-bench`` on a subparsers object (``memory``'s, or any other).

    Returns:
        The sub-parser, with ``run`` set as its default.
    """
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "build-bench",
        help="build the multi-session memory benchmark from SGD",
        description=(
            "Build MS-TOD-style individuals from SGD dialogues in which the system confirms a "
            f"transaction: {INTENTS_PER_INDIVIDUAL} intents x {SESSIONS_PER_INTENT} stored "
            "sessions each, one evaluation item per session (the user's utterance before the "
            "confirmation, in a new session, after a re-entry sentence). Same seed, same file."
        ),
    )
    parser.add_argument(
        "--sgd",
        required=True,
        help="SGD data: a compact sgd_<split>.jsonl(.gz), a folder holding one, or the "
        "original release (root or split folder)",
    )
    parser.add_argument("--split", default="dev", help="train, dev or test (default: dev)")
    parser.add_argument(
        "--out", required=True, type=writable_file, help="the benchmark JSON to write"
    )
    parser.add_argument("--seed", type=int, default=0, help="shuffle seed (default: 0)")
    parser.add_argument(
        "--individuals",
        type=int,
        default=None,
        help="at most N individuals (default: as many as the data allows)",
    )
    parser.add_argument(
        "--hard",
        action="store_true",
        help="re-entry lines name no stored value ('Hi again, it's about the {intent}.'): the "
        "same items, found from the intent and the user's utterance alone",
    )
    parser.set_defaults(run=run_build_bench)
    return parser


def run_build_bench(args: argparse.Namespace) -> int:
    """Build the benchmark, write it, print its counts.

    Raises:
        UsageError: The SGD input is missing or unreadable, or ``--individuals`` is below 1.
    """
    source = input_path(args.sgd)
    if args.individuals is not None and args.individuals < 1:
        raise UsageError("--individuals must be at least 1")
    errors: list[RecordError] = []
    began = time.perf_counter()
    bench = build_memory_bench(
        source,
        args.split,
        seed=args.seed,
        individuals=args.individuals,
        errors=errors,
        hard=args.hard,
    )
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    dump_memory_bench(bench, out)
    for skipped in errors[:5]:
        print(f"skipped SGD record: {skipped}", file=sys.stderr)
    if len(errors) > 5:
        print(f"... and {len(errors) - 5} more unreadable SGD records", file=sys.stderr)
    sessions = sum(len(individual.sessions) for individual in bench.individuals)
    items = sum(len(individual.eval) for individual in bench.individuals)
    print(
        f"{len(bench.individuals)} individuals, {sessions} sessions, {items} eval items "
        f"(SGD {args.split}, seed {args.seed}{', hard' if args.hard else ''}, {len(errors)} "
        f"unreadable records) -> {out} "
        f"in {time.perf_counter() - began:.1f}s"
    )
    if not bench.individuals:
        print(
            f"no individual could be built: need {INTENTS_PER_INDIVIDUAL} intents with "
            f"{SESSIONS_PER_INTENT}+ confirmed dialogues each",
            file=sys.stderr,
        )
        return 1
    return 0
