"""The memory banks of a run (MAP, paper 001, §3.2): which bank, and filling it from sessions.

One path fills a bank wherever sessions come from (``todeval memory eval``, ``todeval
evaluate``'s memory suite, the API): :func:`fill_bank` turns each stored session into QA units
with the ``memory_bank_builder`` role the context names (local: one unit per task-goal slot;
LLM: the memory construction prompt). The local units are deterministic, so a bank that
already holds an individual's local units is left as it is.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable
from pathlib import Path

from evals.datasets.ms_tod_release import ms_tod_qa_units
from evals.memory_schema import Individual, MemoryBench
from nodes.context import Context
from nodes.memory.judges.bank_builder import individual_units, memory_bank_builder
from stores.memory_bank import MemoryBank

Report = Callable[[str], None]
"""Where a session that could not be stored is reported (one line each)."""


@functools.lru_cache(maxsize=8)
def memory_bank(path: str | None, backend: str, collection: str) -> MemoryBank:
    """One memory bank per (folder, backend, collection) in this process."""
    if backend == "memory":
        return MemoryBank(path, backend="memory", collection=collection)
    return MemoryBank(path, backend="chroma", collection=collection)


def bank_for(context: Context) -> MemoryBank:
    """The memory bank the context names."""
    return memory_bank(
        context.memory_bank_path, context.memory_bank_backend, context.memory_bank_collection
    )


def fill_bank(context: Context, individual: Individual, report: Report | None = None) -> int:
    """Store an individual's sessions as QA units with the context's bank builder.

    Returns:
        How many units were stored (0 when the bank already held the local units).

    Raises:
        JudgeSpecError, JudgeConfigError: The bank-builder spec is unknown or unusable here.
    """
    bank = bank_for(context)
    local = context.memory_bank_builder == "local"
    if local and bank.count(individual.individual_id):
        return 0  # the local units are deterministic: the stored ones are these
    builder = memory_bank_builder(context.memory_bank_builder)
    units, failures = individual_units(builder, individual)
    for session_id, reason in failures.items():
        if report is not None:
            report(f"memory bank: {individual.individual_id}/{session_id} not stored: {reason}")
    bank.add_units(units)
    return len(units)


def fill_banks(
    bench: MemoryBench,
    context: Context,
    *,
    qa_memory: Path | None = None,
    report: Report | None = None,
    progress: Callable[[Iterable[Individual]], Iterable[Individual]] = lambda items: items,
) -> None:
    """Store every individual's sessions (:func:`fill_bank`), or MS-TOD's own QA memory.

    Args:
        bench: The benchmark.
        context: Names the bank and the bank builder.
        qa_memory: MS-TOD's QA memory file (Figure 13, session id -> units) for a
            one-individual MS-TOD input, used instead of building units.
        report: Where sessions that could not be stored are reported.
        progress: A progress bar around the individuals.
    """
    if qa_memory is not None:
        [individual] = bench.individuals
        memory = json.loads(qa_memory.read_text())
        units = ms_tod_qa_units(individual.individual_id, memory, individual.sessions)
        bank_for(context).add_units(units)
        return
    for individual in progress(bench.individuals):
        fill_bank(context, individual, report)
