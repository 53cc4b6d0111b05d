"""``todeval memory eval``'s runs: one configuration over the items, and the ablation grid.

Each item is one checkpointed thread of the memory-active graph (:mod:`graphs.memory`);
its line in ``items.jsonl`` holds what the graph did and the item's scores
(:func:`evals.metrics.memory.scores.item_scores`).
"""

from __future__ import annotations

import argparse
import hashlib
import time
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

from pydantic import BaseModel, ConfigDict

from cli.common import fmt_figure, jsonl_line, progress
from evals.memory_schema import MemoryBench, MsTodEvalItem
from evals.metrics.memory.scores import item_scores, memory_summary
from evals.schema import RecordError
from graphs.memory import build_memory_graph
from graphs.runner import ThreadResult, run_corpus
from nodes.context import Context
from nodes.judges.accounting import ACCOUNTING
from nodes.memory.memory_active import bank_for
from nodes.memory.state import MemoryOutput
from stores.checkpoint import open_checkpointer

SUBSYSTEM = "memory_active"
ABLATION_RETRIEVAL = ("bm25", "dense", "hybrid")


class MemoryEvalRecord(BaseModel):
    """One evaluation item and whose memory it needs (the runner's record, named by ``eval_id``)."""

    model_config = ConfigDict(frozen=True)

    eval_id: str
    individual_id: str
    item: MsTodEvalItem


def eval_records(bench: MemoryBench) -> Iterator[MemoryEvalRecord]:
    """Every evaluation item of the benchmark with its individual."""
    for individual in bench.individuals:
        for item in individual.eval:
            yield MemoryEvalRecord(
                eval_id=item.eval_id, individual_id=individual.individual_id, item=item
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
    grid.append(
        ("hybrid + judger, no refinement", replace(
            context, memory_retrieval="hybrid", memory_judger=judger, refine_memory=False
        ))
    )  # fmt: skip
    return grid


def evaluate(
    records: Sequence[MemoryEvalRecord],
    context: Context,
    args: argparse.Namespace,
    *,
    write: bool,
) -> dict[str, Any]:
    """Run every item's thread under ``context`` and summarise; items.jsonl when ``write``."""
    ACCOUNTING.reset()
    persona = {"agreeableness": args.agreeableness}
    bank = bank_for(context)
    lines: list[dict[str, Any]] = []
    failed: list[dict[str, Any]] = []
    latencies: list[float] = []
    started = time.perf_counter()
    with open_checkpointer(args.checkpoints) as saver:
        graph = build_memory_graph().compile(checkpointer=saver, name=SUBSYSTEM)
        stream = run_corpus(
            graph,
            records,
            subsystem=SUBSYSTEM,
            context=context,
            make_input=lambda record: _graph_input(record, persona),
            output_keys=MemoryOutput.__annotations__,
        )
        out = (args.out / "items.jsonl").open("w") if write else None
        try:
            clock = time.perf_counter()
            for record, result in progress(stream, desc="memory eval", unit="item"):
                latencies.append((time.perf_counter() - clock) * 1000.0)
                assert result is not None and not isinstance(record, RecordError)
                if result.output is None:
                    failed.append({"eval_id": result.dialogue_id, "error": result.error})
                else:
                    line = item_line(record, result, bank.units(record.individual_id))
                    lines.append(line)
                    if out is not None:
                        out.write(jsonl_line(line))
                        out.flush()
                clock = time.perf_counter()
        finally:
            if out is not None:
                out.close()
    summary = memory_summary(lines)
    latencies.sort()
    return summary | {
        "failed": failed,
        "seconds": round(time.perf_counter() - started, 2),
        "latency_ms_p50": _percentile(latencies, 0.5),
        "latency_ms_p95": _percentile(latencies, 0.95),
        "configuration": {
            "retrieval": context.memory_retrieval,
            "judger": context.memory_judger,
            "alpha": context.alpha,
            "top_k": context.memory_top_k,
            "selected": context.memory_selected,
            "refine": context.refine_memory,
            "reader": context.reader_judge,
            "planner": context.memory_planner,
            "repair_agent": context.repair_agent,
            "user_simulator": context.user_simulator,
            "supervisor": context.supervisor_judge,
            "max_repair_turns": context.max_repair_turns,
            "user_persona": persona,
        },
        "llm_usage": ACCOUNTING.snapshot(),
    }


def _graph_input(record: MemoryEvalRecord, persona: dict[str, Any]) -> dict[str, Any]:
    item = record.item
    return {
        "individual_id": record.individual_id,
        "intent": item.intent,
        "service": (item.model_extra or {}).get("domain"),
        "context": [turn.model_dump() for turn in item.context],
        "task_goal": dict(item.task_goal),
        "persona": persona | {"seed": int(hashlib.sha256(item.eval_id.encode()).hexdigest(), 16)
                              % 2**31},
    }  # fmt: skip


def item_line(
    record: MemoryEvalRecord, result: ThreadResult, units: Sequence[Any]
) -> dict[str, Any]:
    """One line of items.jsonl: what the graph did with the item and its scores."""
    output = result.output or {}
    item = record.item
    relevant = set(item.relevant_session_ids)
    repair = output.get("repair") or {}
    line = {
        "eval_id": item.eval_id,
        "individual_id": record.individual_id,
        "intent": item.intent,
        "retrieved_unit_ids": [row["unit"]["unit_id"] for row in output.get("activated", [])],
        "relevant_session_ids": item.relevant_session_ids,
        "relevant_units": sum(1 for unit in units if unit.session_id in relevant),
        "selected": output.get("selected", []),
        "missing_slots": output.get("missing_slots"),
        "task_goal": dict(item.task_goal),
        "response": output.get("response"),
        "reference_response": item.reference_response,
        "dte": repair.get("dte"),
        "repair_success": repair.get("success"),
        "repair": repair or None,
        "judges": output.get("judges", {}),
        "reasons": output.get("reasons", []),
        "thread_id": result.thread_id,
    }
    return line | {"scores": item_scores(line)}


def ablation_table(rows: Sequence[dict[str, Any]]) -> str:
    """The grid as a text table."""
    keys = ("recall_at_3", "recall_at_5", "recall_at_10", "slot_accuracy", "jga", "dte",
            "success_rate", "bleu", "rouge_l")  # fmt: skip
    header = f"{'configuration':34}" + "".join(f"{k:>14}" for k in keys)
    body = [
        f"{row['configuration']:34}" + "".join(f"{fmt_figure(row.get(k)):>14}" for k in keys)
        for row in rows
    ]
    return "\n".join([header, *body])


def _percentile(sorted_values: Sequence[float], q: float) -> float | None:
    if not sorted_values:
        return None
    return round(sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))], 3)
