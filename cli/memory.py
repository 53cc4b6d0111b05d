"""``todeval memory``: MAP's memory-active policy on a multi-session benchmark (paper 001).

``memory build-bench`` writes the benchmark (:mod:`cli.memory_build`); ``memory eval`` loads
each individual's stored sessions into a memory bank, runs the memory-active graph on every
evaluation item (one checkpointed thread per item: plan with memory, write the confirmation,
repair its slots with a simulated user) and scores it: Recall@k, slot accuracy, JGA, DTE,
success rate, BLEU, ROUGE-L. ``--ablation`` runs the paper's comparison grid into one table.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from cli.common import UsageError, fmt_figure, input_path, progress, skipped_row, write_json
from cli.memory_build import add_build_bench_parser
from cli.memory_runs import (
    ABLATION_RETRIEVAL,
    ablation_grid,
    ablation_table,
    eval_records,
    evaluate,
)
from evals.datasets.errors import DatasetFormatError
from evals.datasets.jsonio import open_binary
from evals.datasets.ms_tod import load_memory_bench
from evals.datasets.ms_tod_release import (
    load_ms_tod_individual,
    looks_like_ms_tod,
    ms_tod_qa_units,
)
from evals.memory_schema import MemoryBench
from evals.schema import RecordError
from nodes.context import Context
from nodes.judges.spec import JudgeConfigError, JudgeSpecError, parse_spec
from nodes.memory.judges.bank_builder import individual_units, memory_bank_builder
from nodes.memory.judges.intent_capture import intent_capturer
from nodes.memory.judges.memory_judger import memory_judger
from nodes.memory.judges.missing_slot_query import missing_slot_querier
from nodes.memory.judges.reader import memory_reader
from nodes.memory.memory_active import bank_for
from stores.memory_bank import collection_for


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
    parser.add_argument("--out", required=True, type=Path, help="output folder")
    parser.add_argument(
        "--retrieval", choices=ABLATION_RETRIEVAL, default=defaults.memory_retrieval
    )
    parser.add_argument(
        "--judger", default=defaults.memory_judger, help="memory judger spec, or 'none'"
    )
    parser.add_argument("--alpha", type=float, default=defaults.alpha, help="re-rank weight")
    parser.add_argument("--top-k", type=int, default=defaults.memory_top_k)
    parser.add_argument(
        "--no-refine", action="store_true", help="give the reader questions and answers"
    )
    parser.add_argument("--reader", default=defaults.reader_judge, help="reader judge spec")
    parser.add_argument("--planner", default=defaults.memory_planner, help="planning judge spec")
    parser.add_argument(
        "--bank-builder", default="local", help="who turns sessions into QA units (spec)"
    )
    parser.add_argument("--schema", default=None, help="SGD schema.json (task attributes)")
    parser.add_argument(
        "--agreeableness",
        choices=["high", "medium", "low"],
        default="high",
        help="the simulated user's agreeableness in the repair loop (default: %(default)s)",
    )
    parser.add_argument(
        "--bank-backend", choices=["chroma", "memory"], default=defaults.memory_bank_backend
    )
    parser.add_argument("--checkpoints", default=None, help="SQLite checkpoints (':memory:')")
    parser.add_argument("--limit", type=int, default=None, help="only the first N items")
    parser.add_argument(
        "--ablation",
        action="store_true",
        help="run the grid: bm25/dense/hybrid x judger on/off, and hybrid+judger without "
        "refinement; writes OUT/ablation.json (and the same rows in OUT/summary.json)",
    )
    parser.set_defaults(run=run_eval)


def run_eval(args: argparse.Namespace) -> int:
    """Evaluate one configuration (or the ablation grid) and write the outputs."""
    source = input_path(args.bench)
    context = _context(args, source)
    bench, errors = _load(source)
    args.out.mkdir(parents=True, exist_ok=True)
    qa_memory = input_path(args.qa_memory) if args.qa_memory else None
    if qa_memory is not None and len(bench.individuals) != 1:
        raise UsageError("--qa-memory goes with one individual's MS-TOD session file")
    fill_banks(bench, context, args.bank_builder, qa_memory)
    records = list(eval_records(bench))[: args.limit]
    if args.ablation:
        rows = [
            evaluate(records, config, args, write=False) | {"configuration": label}
            for label, config in ablation_grid(context)
        ]
        write_json(args.out / "ablation.json", rows)
        write_json(args.out / "summary.json", {"ablation": rows})
        print(ablation_table(rows))
        return 0
    summary = evaluate(records, context, args, write=True)
    summary["skipped_records"] = [skipped_row(error) for error in errors]
    write_json(args.out / "summary.json", summary)
    print(
        f"evaluated {summary['items']} items: Recall@5 {fmt_figure(summary['recall_at_5'])}, "
        f"slot accuracy {fmt_figure(summary['slot_accuracy'])}, JGA "
        f"{fmt_figure(summary['jga'])}, DTE {fmt_figure(summary['dte'])}, success "
        f"{fmt_figure(summary['success_rate'])}; {len(errors)} skipped; "
        f"wrote {args.out / 'items.jsonl'} and {args.out / 'summary.json'}"
    )
    return 0


def _context(args: argparse.Namespace, source: Path) -> Context:
    schema_path = str(input_path(args.schema)) if args.schema else None
    try:
        parse_spec(args.bank_builder)  # built by fill_banks
        if args.judger != "none":
            parse_spec(args.judger)
        # Build the planning and reader judges now (the nodes reuse them): a bad spec, schema
        # or missing LLM package is one error here, not one failed thread per item.
        intent_capturer(args.planner, schema_path)
        missing_slot_querier(args.planner)
        memory_reader(args.reader)
    except (JudgeSpecError, JudgeConfigError, DatasetFormatError) as error:
        raise UsageError(str(error)) from error
    judgers = {args.judger, "local"} - {"none"} if args.ablation else {args.judger} - {"none"}
    for spec in judgers:
        try:  # load a local model now: a missing model is one error, not one per item
            getattr(memory_judger(spec), "model", None)
        except (FileNotFoundError, JudgeSpecError, JudgeConfigError) as error:
            raise UsageError(f"memory judger {spec!r}: {error}") from error
    return Context(
        memory_retrieval=args.retrieval,
        memory_judger=args.judger,
        alpha=args.alpha,
        memory_top_k=args.top_k,
        refine_memory=not args.no_refine,
        reader_judge=args.reader,
        memory_planner=args.planner,
        schema_path=schema_path,
        memory_bank_backend=args.bank_backend,
        memory_bank_collection=collection_for([source]),
    )


def _load(source: Path) -> tuple[MemoryBench, list[RecordError]]:
    """A benchmark file, or one individual's MS-TOD session file (Figure 12)."""
    try:
        with open_binary(source) as stream:
            head = json.load(stream)
        if looks_like_ms_tod(head):
            individual, errors = load_ms_tod_individual(source)
            return MemoryBench(individuals=[individual]), errors
        return load_memory_bench(source)
    except (DatasetFormatError, json.JSONDecodeError, UnicodeDecodeError) as error:
        raise UsageError(f"{source}: {error}") from error


def fill_banks(
    bench: MemoryBench, context: Context, builder_spec: str, qa_memory: Path | None = None
) -> None:
    """Store every individual's sessions as QA units (skipped when the bank already has them).

    ``qa_memory``: MS-TOD's own QA memory (Figure 13, session id -> units) for a one-individual
    MS-TOD input, used instead of building units.
    """
    bank = bank_for(context)
    if qa_memory is not None:
        [individual] = bench.individuals
        memory = json.loads(qa_memory.read_text())
        bank.add_units(ms_tod_qa_units(individual.individual_id, memory, individual.sessions))
        return
    try:
        builder = memory_bank_builder(builder_spec)
    except (JudgeSpecError, JudgeConfigError) as error:
        raise UsageError(str(error)) from error
    for individual in progress(bench.individuals, desc="memory banks", unit="individual"):
        if bank.count(individual.individual_id) and builder_spec == "local":
            continue  # the local units are deterministic: the stored ones are these
        units, failures = individual_units(builder, individual)
        for session_id, reason in failures.items():
            print(f"memory bank: {individual.individual_id}/{session_id} not stored: {reason}")
        bank.add_units(units)
