"""One subsystem graph over a corpus: the chain every corpus command shares.

checkpointer -> compile -> :func:`~graphs.runner.run_corpus` -> tally (one record's result into
its output lines) -> the lines file, staged as ``<name>.partial``; then :func:`finish` writes
``summary.json`` and ``report.html`` and puts all three in place by renames, so a run killed at
any point leaves the previous run's outputs whole and together (and a ``.partial`` beside them).
A record whose id and content repeat an earlier record's is run once and counted; one that
reuses an earlier id with other content is skipped with the reason.

Each subsystem's module in this package builds a :class:`CorpusJob` (its graph,
records, graph input and tally) and its summary; the CLI only passes a progress bar.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import StateGraph
from pydantic import BaseModel

from todeval.evals.outputs import jsonl_line, write_json
from todeval.evals.report.llm_usage import llm_usage_section
from todeval.evals.report.page import Section, write_report
from todeval.evals.results import ThreadResult
from todeval.evals.schema import RecordError
from todeval.graphs.runner import (
    Durability,
    batch_collection,
    prepared_in_chunks,
    record_id,
    run_corpus,
)
from todeval.nodes.context import Context
from todeval.nodes.judges.accounting import ACCOUNTING
from todeval.nodes.judges.limits import LIMITS, configure_llm, policy_for
from todeval.stores.checkpoint import open_checkpointer

R = TypeVar("R", bound=BaseModel)
T = TypeVar("T")

Stream = Iterator[tuple[Any, ThreadResult | None]]


class Progress(Protocol):
    """A progress display around a run's stream of results (the CLI's bars)."""

    def __call__(
        self,
        items: Iterable[T],
        description: str,
        unit: str,
        *,
        total: int | None = None,
        worker_of: Callable[[T], str | None] | None = None,
    ) -> Iterable[T]:
        """``items`` as they come.

        ``total`` is the number of items when known (for an ETA); ``worker_of`` tells an
        item's worker (for a count per worker process).
        """
        ...


def no_progress(
    items: Iterable[T],
    description: str,
    unit: str,
    *,
    total: int | None = None,
    worker_of: Callable[[T], str | None] | None = None,
) -> Iterable[T]:
    """No progress display (the API's default)."""
    return items


def result_worker(item: tuple[Any, ThreadResult | None]) -> str | None:
    """Which worker process ran a ``(record, result)`` pair (None: this process)."""
    return item[1].worker if item[1] is not None else None


class Tally(Protocol):
    """Turns one record's result into its output lines, keeping what the summary needs."""

    def add(self, record: Any, result: ThreadResult | None) -> list[dict[str, Any]]:
        """The record's lines (none for a skipped or failed record, which the tally notes)."""
        ...


@dataclass
class CorpusJob(Generic[R]):
    """A subsystem graph over a corpus of records.

    Attributes:
        subsystem: The subsystem's name; also names the threads (with the record and context).
        graph: The subsystem's graph builder (compiled here with the run's checkpointer).
        records: The records, read lazily; unreadable ones arrive as :class:`RecordError`.
        make_input: One record's graph input.
        output_keys: The state keys a finished thread reports.
        tally: Builds the lines and gathers the figures.
        lines_file: The JSON Lines file in the output folder (None: write no lines).
        unit: What one record is, for the progress bar.
        prepare: Batch work for a chunk of records before they run (local judges embed texts).
        max_concurrency: Records run at once (threads; results stay in input order).
        total: How many records the inputs hold, if known up front (the progress bar's ETA).
        label: What the progress bar calls the run (default: the subsystem).
        durability: When a thread's checkpoints are written (see
            :data:`graphs.runner.Durability`): ``sync`` for live conversations and pipelines
            that must continue from the step that stopped them.
    """

    subsystem: str
    graph: StateGraph[Any, Context, Any, Any]
    records: Iterable[R | RecordError]
    make_input: Callable[[R], dict[str, Any]]
    output_keys: Iterable[str]
    tally: Tally
    lines_file: str | None
    unit: str = "dialogue"
    prepare: Callable[[Sequence[R]], None] | None = None
    max_concurrency: int = 1
    durability: Durability = "exit"
    total: int | None = None
    label: str | None = None


LISTED_IDS = 1000
"""How many record ids the summary lists per kind (the count is always whole)."""


@dataclass
class RunStats:
    """What a corpus run noticed besides its figures."""

    elapsed_s: float = 0.0
    duplicates: list[str] = field(default_factory=list)
    """Ids of records that repeated an earlier record exactly (run once)."""
    unanswered: list[str] = field(default_factory=list)
    """Ids of records with LLM labels left null by failed or refused calls (asked next run)."""
    staged: Path | None = None
    """The lines file as written so far (``<name>.partial``), until :func:`publish` renames it."""

    def published(self) -> Path | None:
        """Where the lines file goes."""
        return None if self.staged is None else self.staged.with_suffix("")

    def details(self) -> dict[str, Any]:
        """The summary's account of the run: LLM usage and time, duplicates, unanswered calls."""
        return {
            "llm_usage": ACCOUNTING.snapshot(),
            "llm_usage_by_judge": ACCOUNTING.by_judge(),
            "llm_spent": LIMITS.spent(),
            "elapsed_s": round(self.elapsed_s, 2),
            "duplicate_records": {
                "count": len(self.duplicates),
                "ids": self.duplicates[:LISTED_IDS],
            },
            "unanswered_records": {
                "count": len(self.unanswered),
                "ids": self.unanswered[:LISTED_IDS],
                "note": "LLM calls failed or were refused (limits, budget, dry run): their "
                "labels are null with the reason; re-run the same command to ask them again "
                "(answers already received come from the cache)"
                if self.unanswered
                else "",
            },
        }


def run_job(
    job: CorpusJob[R],
    context: Context,
    *,
    out: Path | None,
    checkpoints: str | None,
    progress: Progress = no_progress,
    stream: Callable[[BaseCheckpointSaver[str], Iterable[Any]], Stream] | None = None,
) -> RunStats:
    """Run (or read back) every record's thread and write its lines as it finishes.

    Args:
        job: What to run.
        context: The run's judges and thresholds.
        out: The output folder (None: write nothing; the tally still gathers the figures).
        checkpoints: The checkpointer target (see :func:`stores.checkpoint.open_checkpointer`).
        progress: A progress bar around the stream of results.
        stream: Another source of ``(record, result)`` pairs, given the opened checkpointer
            and the job's records (repeats removed): the evaluation's LangGraph server, worker
            processes or Ray cluster; default: the job's graph in this process.

    Returns:
        The run's statistics; the lines file is staged until :func:`finish` or :func:`publish`.
    """
    started = time.perf_counter()  # LLM counters run from start_run: a run may be two jobs
    stats = RunStats()
    job = _with_distinct_ids(job, stats)
    lines: AbstractContextManager[Any] = nullcontext()
    if out is not None and job.lines_file is not None:
        out.mkdir(parents=True, exist_ok=True)
        stats.staged = out / f"{job.lines_file}.partial"
        lines = stats.staged.open("w", encoding="utf-8")
    with open_checkpointer(checkpoints) as saver, lines as lines_out, batch_collection():
        if stream is not None:
            results = stream(saver, job.records)
        else:
            results = _in_process(job, context, saver)
        label = job.label or job.subsystem
        shown = progress(results, label, job.unit, total=job.total, worker_of=result_worker)
        for record, result in shown:
            written = job.tally.add(record, result)
            if result is not None and result.unanswered:
                stats.unanswered.append(result.dialogue_id)
            if lines_out is not None:
                lines_out.writelines(jsonl_line(line) for line in written)
                lines_out.flush()  # a killed run leaves whole lines behind
    stats.elapsed_s = time.perf_counter() - started
    return stats


def _with_distinct_ids(job: CorpusJob[R], stats: RunStats) -> CorpusJob[R]:
    """The job over its records with exact repeats dropped (counted) and id clashes skipped."""

    def distinct() -> Iterator[R | RecordError]:
        seen: dict[str, bytes] = {}  # id -> sha256 of the content (raw: half a hex digest)
        for record in job.records:
            if isinstance(record, RecordError):
                yield record
                continue
            name = record_id(record)
            digest = hashlib.sha256(record.model_dump_json().encode()).digest()
            if name not in seen:
                seen[name] = digest
                yield record
            elif seen[name] == digest:
                stats.duplicates.append(name)
            else:
                yield RecordError(
                    file="(inputs)",
                    dialogue_id=name,
                    field="id",
                    message="an earlier record has this id with other content; only the "
                    "first was evaluated (give each record its own id)",
                )

    return replace(job, records=distinct())


def _in_process(job: CorpusJob[R], context: Context, saver: BaseCheckpointSaver[str]) -> Stream:
    graph = job.graph.compile(checkpointer=saver, name=job.subsystem)
    records: Iterable[Any] = job.records
    if job.prepare is not None:
        records = prepared_in_chunks(records, job.prepare)
    return run_corpus(
        graph,
        records,
        subsystem=job.subsystem,
        context=context,
        make_input=job.make_input,
        output_keys=job.output_keys,
        max_concurrency=job.max_concurrency,
        durability=job.durability,
    )


def start_run(context: Context) -> None:
    """Before a run builds its judges: its LLM policy installed, the counters reset."""
    configure_llm(policy_for(context))
    ACCOUNTING.reset()


def publish(stats: RunStats) -> None:
    """Put the staged lines file in place (one rename)."""
    target = stats.published()
    if stats.staged is not None and target is not None and stats.staged.exists():
        os.replace(stats.staged, target)


def finish(
    out: Path,
    summary: Mapping[str, Any],
    stats: RunStats,
    *,
    title: str,
    sections: Sequence[Section],
    meta: Mapping[str, str],
) -> None:
    """Write ``summary.json`` and ``report.html`` and publish the lines, as one step.

    Both files are written under temporary names first; then the lines, the summary and the
    report are renamed into place one after another, so a crash while writing leaves the last
    run's three files together.
    """
    out.mkdir(parents=True, exist_ok=True)
    staged_summary, staged_report = out / ".summary.json.partial", out / ".report.html.partial"
    write_json(staged_summary, summary)
    usage = llm_usage_section(summary)
    write_report(staged_report, title, [*sections, *([usage] if usage else [])], meta=meta)
    publish(stats)
    os.replace(staged_summary, out / "summary.json")
    os.replace(staged_report, out / "report.html")
