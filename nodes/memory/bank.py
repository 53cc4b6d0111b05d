"""The memory banks of a run (MAP, paper 001, §3.2): which bank, and filling it from sessions.

One path fills a bank wherever sessions come from (``todeval memory eval``, ``todeval
evaluate``'s memory suite, the API): :func:`fill_bank` turns each stored session into QA units
with the ``memory_bank_builder`` role the context names (local: one unit per slot value the
session's dialogue says, or per task-goal slot under the ``task_goal_oracle`` bank source; LLM:
the memory construction prompt). The local units are deterministic, so a bank that already
holds an individual's local units is left as it is. Each bank source has its own collection
(:func:`bank_collection`): the oracle keeps the name earlier runs filled with task-goal units,
the dialogue bank another one per schema, so no bank is read back under another source. The
comparison settings' whole-session memory (dialogues, summaries:
:mod:`nodes.memory.documents`) is kept in collections beside the bank (:func:`store_for`) and
filled the same way when a setting reads it.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable, Iterable
from pathlib import Path

from todeval.evals.datasets.ms_tod_release import ms_tod_qa_units
from todeval.evals.datasets.sgd_schema import ServiceSchema, load_sgd_schema
from todeval.evals.memory_schema import Individual, MemoryBench
from todeval.nodes.context import Context
from todeval.nodes.judges.spec import parse_spec
from todeval.nodes.memory.documents import DOCUMENT_COLLECTIONS, session_documents
from todeval.nodes.memory.judges.bank_builder import LocalMemoryBankBuilder, individual_units
from todeval.nodes.memory.roles import BANK_BUILDER
from todeval.nodes.memory.settings import MemorySettings, Source, memory_setting
from todeval.stores.memory_bank import MemoryBank

Report = Callable[[str], None]
"""Where a session that could not be stored is reported (one line each)."""


@functools.lru_cache(maxsize=8)
def memory_bank(
    path: str | None, backend: str, collection: str, server: str | None = None
) -> MemoryBank:
    """One memory bank per (folder, backend, collection, Chroma server) in this process."""
    if backend == "memory":
        return MemoryBank(path, backend="memory", collection=collection)
    return MemoryBank(path, backend="chroma", collection=collection, server=server)


@functools.lru_cache(maxsize=4)
def _schema(path: str) -> dict[str, ServiceSchema]:
    return load_sgd_schema(path)


def bank_for(context: Context) -> MemoryBank:
    """The memory bank the context names."""
    return _bank(context, bank_collection(context))


#: Appended to ``bank_collection`` for the dialogue-built bank (the oracle keeps the plain name).
DIALOGUE_COLLECTION = "__said"


def bank_collection(context: Context) -> str:
    """The QA bank's collection: ``bank_collection``, for the dialogue bank with a suffix.

    The dialogue bank's units depend on the schema (which slots are looked for), so its
    collection names the schema too.
    """
    settings = MemorySettings.of(context)
    if settings.bank_source == "task_goal_oracle":
        return settings.bank_collection
    name = settings.bank_collection + DIALOGUE_COLLECTION
    if context.schema_path:
        name += "_" + hashlib.sha256(context.schema_path.encode()).hexdigest()[:8]
    return name


def bank_source(context: Context) -> str:
    """Which bank a run reads, for its summary and report.

    ``dialogue`` or ``task_goal_oracle`` under the local builder; an LLM builder's bank is
    ``llm`` (it reads the dialogue and the task goal, App. B.4).
    """
    if parse_spec(context.spec("memory_bank")).is_local:
        return MemorySettings.of(context).bank_source
    return "llm"


def _bank(context: Context, collection: str) -> MemoryBank:
    """The bank ``collection`` where the context keeps its banks (folder, process or server)."""
    where = (
        MemorySettings.of(context).bank_path,
        MemorySettings.of(context).bank_backend,
        collection,
    )
    # lru_cache keys a call by the arguments as passed: without a server, call it the way
    # every other caller does (three arguments), so they all get the same bank.
    if (
        MemorySettings.of(context).chroma_server is None
        or MemorySettings.of(context).bank_backend == "memory"
    ):
        return memory_bank(*where)
    return memory_bank(*where, MemorySettings.of(context).chroma_server)


def store_for(context: Context, source: Source) -> MemoryBank | None:
    """The store ``source`` memory is kept in: the QA bank, a document collection, or none."""
    if source == "none":
        return None
    if source == "qa":
        return bank_for(context)
    collection = MemorySettings.of(context).bank_collection + DOCUMENT_COLLECTIONS[source]
    if source == "summary":  # one summarizer's summaries are not another's
        collection += (
            "_" + hashlib.sha256(context.spec("memory_summarizer").encode()).hexdigest()[:8]
        )
    return _bank(context, collection)


def fill_bank(
    context: Context,
    individual: Individual,
    report: Report | None = None,
    *,
    sources: tuple[Source, ...] = (),
) -> int:
    """Store an individual's sessions as QA units, and as the setting's other memory.

    Args:
        context: Names the bank, the bank builder, the setting and the summarizer.
        individual: Whose sessions.
        report: Where sessions that could not be stored are reported.
        sources: Whole-session memory to fill besides the setting's own (a grid's settings).

    Returns:
        How many QA units were stored (0 when the bank already held the local units).

    Raises:
        JudgeSpecError, JudgeConfigError: The bank-builder spec is unknown or unusable here.
    """
    for source in _document_sources(context, sources):
        _fill_documents(context, individual, source, report)
    bank = bank_for(context)
    local = context.spec("memory_bank") == "local"
    if local and bank.count(individual.individual_id):
        return 0  # the local units are deterministic: the stored ones are these
    builder = BANK_BUILDER.judge(context.spec("memory_bank"), context.llm.max_retries)
    if isinstance(builder, LocalMemoryBankBuilder):
        schema = _schema(context.schema_path) if context.schema_path else None
        builder = LocalMemoryBankBuilder(MemorySettings.of(context).bank_source, schema)
    units, failures = individual_units(builder, individual)
    for session_id, reason in failures.items():
        if report is not None:
            report(f"memory bank: {individual.individual_id}/{session_id} not stored: {reason}")
    bank.add_units(units)
    return len(units)


def _document_sources(context: Context, sources: tuple[Source, ...]) -> list[Source]:
    """The whole-session memory to fill: the setting's and ``sources``, QA units aside.

    Summaries are skipped under a local summarizer: it writes none, and each item of a summary
    setting says so (:func:`~nodes.memory.documents.missing_memory_reason`).
    """
    wanted = {memory_setting(MemorySettings.of(context).setting).source, *sources} - {"qa", "none"}
    if parse_spec(context.spec("memory_summarizer")).is_local:
        wanted.discard("summary")
    return sorted(wanted)


def _fill_documents(
    context: Context, individual: Individual, source: Source, report: Report | None
) -> None:
    store = store_for(context, source)
    assert store is not None
    if store.count(individual.individual_id):
        return  # dialogues are deterministic; a summarizer's summaries are kept once written
    documents, failures = session_documents(
        individual, source, context.spec("memory_summarizer"), context.llm.max_retries
    )
    if failures and report is not None:
        reason = next(iter(failures.values()))
        report(f"{source} memory: {individual.individual_id}: {len(failures)} sessions: {reason}")
    store.add_units(documents)


def fill_banks(
    bench: MemoryBench,
    context: Context,
    *,
    qa_memory: Path | None = None,
    report: Report | None = None,
    progress: Callable[[Iterable[Individual]], Iterable[Individual]] = lambda items: items,
    sources: tuple[Source, ...] = (),
) -> None:
    """Store every individual's sessions (:func:`fill_bank`), or MS-TOD's own QA memory.

    Args:
        bench: The benchmark.
        context: Names the bank and the bank builder.
        qa_memory: MS-TOD's QA memory file (Figure 13, session id -> units) for a
            one-individual MS-TOD input, used instead of building units.
        report: Where sessions that could not be stored are reported.
        progress: A progress bar around the individuals.
        sources: Whole-session memory to fill besides the setting's own (a grid's settings).
    """
    if qa_memory is not None:
        [individual] = bench.individuals
        memory = json.loads(qa_memory.read_text())
        units = ms_tod_qa_units(individual.individual_id, memory, individual.sessions)
        bank_for(context).add_units(units)
        for source in _document_sources(context, sources):
            _fill_documents(context, individual, source, report)
        return
    for individual in progress(bench.individuals):
        fill_bank(context, individual, report, sources=sources)
