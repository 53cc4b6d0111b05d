"""MAP's memory-active policy over a multi-session benchmark (paper 001).

:func:`memory_corpus` stores each individual's sessions in the memory bank (the context's bank
builder), runs the memory graph on every evaluation item (one checkpointed thread per item:
plan with memory, write the confirmation, repair its slots with a simulated user) and scores it:
Recall@k, slot accuracy, JGA, DTE, success rate, BLEU, ROUGE-L. :func:`memory_ablation` runs the
paper's comparison grid (:func:`ablation_grid`) over the same items.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from evals.datasets.errors import DatasetFormatError
from evals.datasets.jsonio import open_binary
from evals.datasets.ms_tod import load_memory_bench
from evals.datasets.ms_tod_release import load_ms_tod_individual, looks_like_ms_tod
from evals.memory_schema import MemoryBench, MemoryEvalRecord
from evals.metrics.memory.tally import MemoryTally
from evals.schema import RecordError
from graphs.corpus.job import CorpusJob, Progress, no_progress, run_details, run_job
from graphs.memory import build_memory_graph
from nodes.context import Context
from nodes.memory.bank import bank_for
from nodes.memory.state import MemoryOutput

SUBSYSTEM = "memory"
ABLATION_RETRIEVAL = ("bm25", "dense", "hybrid")


def load_memory_input(source: Path) -> tuple[MemoryBench, list[RecordError]]:
    """A benchmark file, or one individual's MS-TOD session file (Figure 12).

    Raises:
        DatasetFormatError: The file cannot be read as either.
    """
    try:
        with open_binary(source) as stream:
            head = json.load(stream)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise DatasetFormatError(f"{source}: {error}") from error
    if looks_like_ms_tod(head):
        individual, errors = load_ms_tod_individual(source)
        return MemoryBench(individuals=[individual]), errors
    return load_memory_bench(source)


def memory_input(record: MemoryEvalRecord, persona: dict[str, Any]) -> dict[str, Any]:
    """An item as the memory graph reads it, with the simulated user's persona (seeded by id)."""
    item = record.item
    seed = int(hashlib.sha256(item.eval_id.encode()).hexdigest(), 16) % 2**31
    return {
        "individual_id": record.individual_id,
        "intent": item.intent,
        "service": (item.model_extra or {}).get("domain"),
        "context": [turn.model_dump() for turn in item.context],
        "task_goal": dict(item.task_goal),
        "persona": persona | {"seed": seed},
    }


def configuration(context: Context, persona: dict[str, Any]) -> dict[str, Any]:
    """The settings a memory run reports beside its figures."""
    return {
        "retrieval": context.memory_retrieval,
        "judger": context.memory_judger,
        "alpha": context.alpha,
        "top_k": context.memory_top_k,
        "selected": context.memory_selected,
        "refine": context.refine_memory,
        "reader": context.reader_judge,
        "planner": context.memory_planner,
        "bank_builder": context.memory_bank_builder,
        "repair_agent": context.repair_agent,
        "user_simulator": context.user_simulator,
        "supervisor": context.supervisor_judge,
        "max_repair_turns": context.max_repair_turns,
        "user_persona": persona,
    }


def memory_corpus(
    records: Sequence[MemoryEvalRecord],
    context: Context,
    *,
    out: Path | None,
    agreeableness: str = "high",
    checkpoints: str | None = None,
    progress: Progress = no_progress,
) -> dict[str, Any]:
    """Run every item's thread under ``context`` and summarise; ``items.jsonl`` when ``out``.

    The bank must hold the individuals' units (:func:`nodes.memory.bank.fill_banks`).

    Returns:
        The summary (the caller writes it).
    """
    persona = {"agreeableness": agreeableness}
    bank = bank_for(context)
    tally = MemoryTally(bank.units)
    job = CorpusJob(
        subsystem=SUBSYSTEM,
        graph=build_memory_graph(),
        records=records,
        make_input=lambda record: memory_input(record, persona),
        output_keys=MemoryOutput.__annotations__,
        tally=tally,
        lines_file="items.jsonl",
        unit="item",
    )
    elapsed = run_job(job, context, out=out, checkpoints=checkpoints, progress=progress)
    details = run_details(elapsed)
    return (
        tally.summary()
        | {"seconds": details["elapsed_s"], "configuration": configuration(context, persona)}
        | {"llm_usage": details["llm_usage"]}
    )


def ablation_grid(context: Context) -> list[tuple[str, Context]]:
    """MAP's comparison (Fig. 6, Table 6).

    Each retrieval mode with and without the judger, then hybrid + judger without refinement.
    """
    judger = context.memory_judger if context.memory_judger != "none" else "local"
    grid = [
        (
            f"{mode} {'+ judger' if spec != 'none' else ''}".strip(),
            replace(context, memory_retrieval=mode, memory_judger=spec, refine_memory=True),
        )
        for mode in ABLATION_RETRIEVAL
        for spec in ("none", judger)
    ]
    no_refinement = replace(
        context, memory_retrieval="hybrid", memory_judger=judger, refine_memory=False
    )
    grid.append(("hybrid + judger, no refinement", no_refinement))
    return grid


def memory_ablation(
    records: Sequence[MemoryEvalRecord],
    context: Context,
    *,
    agreeableness: str = "high",
    checkpoints: str | None = None,
    progress: Progress = no_progress,
) -> list[dict[str, Any]]:
    """Every configuration of :func:`ablation_grid` over the items (no item lines written)."""
    return [
        memory_corpus(
            records,
            config,
            out=None,
            agreeableness=agreeableness,
            checkpoints=checkpoints,
            progress=progress,
        )
        | {"configuration": label}
        for label, config in ablation_grid(context)
    ]
