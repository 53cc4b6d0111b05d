"""One subsystem graph over a corpus: the chain every corpus command shares.

checkpointer -> compile -> :func:`~graphs.runner.run_corpus` -> tally (one record's result into
its output lines) -> the lines file; then :func:`finish` writes ``summary.json`` and
``report.html``. Each subsystem's module in this package builds a :class:`CorpusJob` (its graph,
records, graph input and tally) and its summary; the CLI only passes a progress bar.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import StateGraph
from pydantic import BaseModel

from evals.outputs import jsonl_line, write_json
from evals.report.page import Section, write_report
from evals.results import ThreadResult
from evals.schema import RecordError
from graphs.runner import prepared_in_chunks, run_corpus
from nodes.context import Context
from nodes.judges.accounting import ACCOUNTING
from stores.checkpoint import open_checkpointer

R = TypeVar("R", bound=BaseModel)
T = TypeVar("T")

Progress = Callable[[Iterable[Any], str, str], Iterable[Any]]
"""``(items, description, unit) -> items``: a progress bar around a stream (the CLI's)."""

Stream = Iterator[tuple[Any, ThreadResult | None]]


def no_progress(items: Iterable[T], description: str, unit: str) -> Iterable[T]:
    """No progress display (the API's default)."""
    return items


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


def run_job(
    job: CorpusJob[R],
    context: Context,
    *,
    out: Path | None,
    checkpoints: str | None,
    progress: Progress = no_progress,
    stream: Callable[[BaseCheckpointSaver[str]], Stream] | None = None,
) -> float:
    """Run (or read back) every record's thread and write its lines as it finishes.

    Args:
        job: What to run.
        context: The run's judges and thresholds.
        out: The output folder (None: write nothing; the tally still gathers the figures).
        checkpoints: The checkpointer target (see :func:`stores.checkpoint.open_checkpointer`).
        progress: A progress bar around the stream of results.
        stream: Another source of ``(record, result)`` pairs on the opened checkpointer (the
            evaluation's remote runner); default: the job's graph in this process.

    Returns:
        The seconds the run took.
    """
    ACCOUNTING.reset()
    started = time.perf_counter()
    lines: AbstractContextManager[Any] = nullcontext()
    if out is not None and job.lines_file is not None:
        out.mkdir(parents=True, exist_ok=True)
        lines = (out / job.lines_file).open("w", encoding="utf-8")
    with open_checkpointer(checkpoints) as saver, lines as lines_out:
        results = stream(saver) if stream is not None else _in_process(job, context, saver)
        for record, result in progress(results, job.subsystem, job.unit):
            written = job.tally.add(record, result)
            if lines_out is not None:
                lines_out.writelines(jsonl_line(line) for line in written)
                lines_out.flush()  # a killed run leaves whole lines behind
    return time.perf_counter() - started


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
    )


def run_details(elapsed_s: float) -> dict[str, Any]:
    """What every summary records about the run itself: LLM usage and time."""
    return {"llm_usage": ACCOUNTING.snapshot(), "elapsed_s": round(elapsed_s, 2)}


def finish(
    out: Path,
    summary: Mapping[str, Any],
    *,
    title: str,
    sections: Sequence[Section],
    meta: Mapping[str, str],
) -> None:
    """Write ``summary.json`` and ``report.html`` (each whole, through a rename)."""
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "summary.json", summary)
    write_report(out / "report.html", title, sections, meta=meta)
