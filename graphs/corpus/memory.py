"""MAP's memory-active policy over a multi-session benchmark (paper 001).

:func:`memory_corpus` stores each individual's sessions in the memory bank (the context's bank
builder), runs the memory graph on every evaluation item (one checkpointed thread per item:
plan with memory, write the confirmation, repair its slots with a simulated user) and scores it:
Recall@k, slot accuracy, JGA, DTE, success rate, BLEU, ROUGE-L, the GPT-4 score.
:func:`memory_ablation` runs the retrieval x judger grid (:func:`ablation_grid`) and
:func:`memory_baselines` the paper's comparison settings (:data:`BASELINES`) over the same items.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

from todeval.evals.datasets.errors import DatasetFormatError
from todeval.evals.datasets.jsonio import open_binary
from todeval.evals.datasets.ms_tod import load_memory_bench
from todeval.evals.datasets.ms_tod_release import load_ms_tod_individual, looks_like_ms_tod
from todeval.evals.memory_schema import MemoryBench, MemoryEvalRecord
from todeval.evals.metrics.memory.tally import MemoryTally
from todeval.evals.schema import RecordError
from todeval.graphs.corpus.job import CorpusJob, Progress, no_progress, publish, run_job, start_run
from todeval.graphs.memory import MemoryTask, build_memory_graph, run_memory
from todeval.graphs.suites import Branch, EvaluationSuite
from todeval.nodes.context import Context
from todeval.nodes.memory.bank import bank_source, store_for
from todeval.nodes.memory.roles import check_memory_judges
from todeval.nodes.memory.settings import MemorySettings, Source, memory_setting
from todeval.nodes.memory.state import MemoryOutput

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
        "reference_response": item.reference_response,
        "relevant_session_ids": list(item.relevant_session_ids),
        "persona": persona | {"seed": seed},
    }


def configuration(context: Context, persona: dict[str, Any]) -> dict[str, Any]:
    """The settings a memory run reports beside its figures."""
    return {
        "setting": MemorySettings.of(context).setting,
        "activation": MemorySettings.of(context).activation,
        "retrieval": MemorySettings.of(context).retrieval,
        "judger": context.spec("memory_judger"),
        "alpha": MemorySettings.of(context).alpha,
        "top_k": MemorySettings.of(context).top_k,
        "selected": MemorySettings.of(context).selected,
        "refine": MemorySettings.of(context).refine,
        "reader": context.spec("reader"),
        "scorer": context.spec("gpt4_score"),
        "summarizer": context.spec("memory_summarizer"),
        "planner": context.spec("intent_capture"),
        "bank_builder": context.spec("memory_bank"),
        "bank_source": bank_source(context),
        "repair_agent": context.spec("repair_agent"),
        "user_simulator": context.spec("user_simulator"),
        "supervisor": context.spec("supervisor"),
        "max_repair_turns": MemorySettings.of(context).max_repair_turns,
        "user_persona": persona,
    }


def memory_corpus(
    records: Sequence[MemoryEvalRecord],
    context: Context,
    *,
    out: Path | None,
    disclosure: str = "high",
    checkpoints: str | None = None,
    progress: Progress = no_progress,
) -> dict[str, Any]:
    """Run every item's thread under ``context`` and summarise; ``items.jsonl`` when ``out``.

    The bank must hold the individuals' units (:func:`nodes.memory.bank.fill_banks`).

    Returns:
        The summary (the caller writes it).
    """
    start_run(context)
    persona = {"disclosure": disclosure}
    store = store_for(context, memory_setting(MemorySettings.of(context).setting).source)
    tally = MemoryTally(store.units if store is not None else lambda _individual: [])
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
    stats = run_job(job, context, out=out, checkpoints=checkpoints, progress=progress)
    publish(stats)
    details = stats.details()
    return (
        tally.summary()
        | {"seconds": details["elapsed_s"], "configuration": configuration(context, persona)}
        | {"llm_usage": details["llm_usage"]}
    )


def ablation_grid(context: Context) -> list[tuple[str, Context]]:
    """MAP's comparison (Fig. 6, Table 6).

    Each retrieval mode with and without the judger, then hybrid + judger without refinement.
    """
    judger = context.spec("memory_judger") if context.spec("memory_judger") != "none" else "local"
    grid = [
        (
            f"{mode} {'+ judger' if spec != 'none' else ''}".strip(),
            context.updated(
                judges={"memory_judger": spec},
                settings={"memory": {"retrieval": mode, "refine": True}},
            ),
        )
        for mode in ABLATION_RETRIEVAL
        for spec in ("none", judger)
    ]
    no_refinement = context.updated(
        judges={"memory_judger": judger},
        settings={"memory": {"retrieval": "hybrid", "refine": False}},
    )
    grid.append(("hybrid + judger, no refinement", no_refinement))
    return grid


BASELINES: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("MAP", "Tables 3-4 (w/ MAP)", {}),
    (
        "MAP, per-QA activation",
        "(todeval: QA units ranked one by one)",
        {"memory_activation": "qa"},
    ),
    ("MAP w/o judger", "Fig. 6", {"memory_judger": "none"}),
    ("MAP w/o refinement", "Table 6", {"refine_memory": False}),
    ("hybrid RAG, QA units", "Fig. 4, App. D.2", {"memory_setting": "qa_rag"}),
    ("current session context", "Table 1", {"memory_setting": "current_session"}),
    ("full conversation context", "Table 1; Table 3 (w/o MAP)", {"memory_setting": "full_context"}),
    ("BM25 retrieval", "Table 1", {"memory_setting": "dialogue_rag", "memory_retrieval": "bm25"}),
    (
        "embedding retrieval",
        "Table 1",
        {"memory_setting": "dialogue_rag", "memory_retrieval": "dense"},
    ),
    (
        "hybrid retrieval",
        "Table 1",
        {"memory_setting": "dialogue_rag", "memory_retrieval": "hybrid"},
    ),
    ("summaries (ChatCite)", "Table 4, App. D.1", {"memory_setting": "summary"}),
    ("hybrid RAG, summaries", "Fig. 5", {"memory_setting": "summary_rag"}),
    ("oracle (relevant dialogues)", "Table 1", {"memory_setting": "oracle"}),
    (
        "oracle (relevant QA units)",
        "(todeval: perfect activation)",
        {"memory_setting": "oracle_qa"},
    ),
)
"""The comparison rows: label, where the paper has it, and the context fields it changes.

Every row keeps the run's reader, judges and retrieval mode unless it names its own; the
``dialogue_rag`` rows are Table 1's retrieval of historical dialogues by each mode.
"""

BASELINE_SOURCES: tuple[Source, ...] = ("dialogue", "summary")
"""The whole-session memory :data:`BASELINES` read (fill it before running them)."""


def memory_baselines(
    records: Sequence[MemoryEvalRecord],
    context: Context,
    *,
    disclosure: str = "high",
    checkpoints: str | None = None,
    progress: Progress = no_progress,
) -> list[dict[str, Any]]:
    """Every row of :data:`BASELINES` over the items (no item lines written).

    The banks must hold the QA units and :data:`BASELINE_SOURCES`
    (:func:`nodes.memory.bank.fill_banks` with ``sources=BASELINE_SOURCES``).
    """
    rows = []
    for label, paper, fields in BASELINES:
        config = context.with_flat({"memory_setting": "map"} | fields)
        summary = memory_corpus(
            records, config, out=None, disclosure=disclosure, checkpoints=checkpoints,
            progress=progress,
        )  # fmt: skip
        rows.append(summary | {"configuration": label, "paper": paper})
    return rows


def memory_ablation(
    records: Sequence[MemoryEvalRecord],
    context: Context,
    *,
    disclosure: str = "high",
    checkpoints: str | None = None,
    progress: Progress = no_progress,
) -> list[dict[str, Any]]:
    """Every configuration of :func:`ablation_grid` over the items (no item lines written)."""
    return [
        memory_corpus(
            records,
            config,
            out=None,
            disclosure=disclosure,
            checkpoints=checkpoints,
            progress=progress,
        )
        | {"configuration": label}
        for label, config in ablation_grid(context)
    ]


def memory_judges(context: Context) -> dict[str, Any]:
    """Who judged the memory suite of an evaluation."""
    return {
        "retrieval": MemorySettings.of(context).retrieval,
        "judger": context.spec("memory_judger"),
        "scorer": context.spec("gpt4_score"),
        "bank_builder": context.spec("memory_bank"),
        "bank_source": bank_source(context),
        "reader": context.spec("reader"),
        "repair_agent": context.spec("repair_agent"),
        "user_simulator": context.spec("user_simulator"),
    }


EVALUATION = EvaluationSuite(
    run=cast(Branch, run_memory),
    task_schema=MemoryTask,
    judges=memory_judges,
    roles=(
        "memory_bank",
        "memory_summarizer",
        "intent_capture",
        "missing_slot_query",
        "memory_judger",
        "reader",
        "gpt4_score",
        "supervisor",
        "repair_agent",
        "user_simulator",
    ),
    check=check_memory_judges,
)
"""Memory in ``todeval evaluate`` (its registry line names this)."""
