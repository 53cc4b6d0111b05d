"""Record chunks run elsewhere (worker processes, a Ray cluster), results in input order.

A corpus run on several cores or machines cuts its records into chunks and gives each chunk to
an :class:`Engine`: :mod:`graphs.process_runner` (processes on this machine) or
:mod:`graphs.ray_runner` (tasks on a Ray cluster). :func:`run_chunks` keeps a few chunks per
worker in flight and yields every record's result in input order, as
:func:`graphs.runner.run_corpus` does in one process.

In the worker, :func:`run_chunk` opens the run's checkpointer once per process (a SQLite file in
WAL mode, or Postgres, which any worker of a cluster can reach), compiles the graph, lets the
judges prepare the chunk (one embedding batch) and runs each record through
:func:`graphs.runner.run_dialogue`: the same thread ids as in one process, so a rerun on any
number of workers reads finished threads back, and the results, tallied in input order by the
caller, give the same figures to the last digit. The LLM usage a chunk recorded travels back
with its results and is added to this process's accounting.
"""

from __future__ import annotations

import os
import resource
import socket
import time
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from itertools import islice
from typing import Any, Generic, Protocol, TypeVar

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import StateGraph
from langgraph.graph.state import CompiledStateGraph
from pydantic import BaseModel

from todeval.evals.results import ThreadResult
from todeval.evals.schema import RecordError
from todeval.graphs.runner import (
    R,
    ThreadNames,
    batch_collection,
    record_id,
    run_dialogue,
    run_in_order,
)
from todeval.nodes.context import Context
from todeval.nodes.judges.accounting import ACCOUNTING
from todeval.nodes.judges.limits import configure_llm, policy_for
from todeval.stores.checkpoint import open_checkpointer

H = TypeVar("H")
Record = TypeVar("Record", bound=BaseModel, contravariant=True)

CHUNK_SIZE = 16
"""Records per chunk: large enough for one embedding batch per chunk, small enough that results
and progress come back in steady steps and a lost worker loses little."""

CHUNKS_PER_WORKER = 2
"""Chunks in flight per worker: one running, one waiting, so no worker idles between chunks."""


class ChunkWork(Protocol[Record]):
    """What a worker needs to run a corpus's records; picklable (it travels to the workers)."""

    @property
    def subsystem(self) -> str:
        """Names the threads (see :func:`graphs.runner.thread_id_for`)."""
        ...

    @property
    def context(self) -> Context:
        """The run's judges and thresholds."""
        ...

    @property
    def output_keys(self) -> tuple[str, ...]:
        """The state keys a finished thread reports."""
        ...

    def build_graph(self) -> StateGraph[Any, Context, Any, Any]:
        """The graph builder (compiled in the worker with its checkpointer)."""
        ...

    def graph_input(self, record: Record) -> dict[str, Any]:
        """One record's graph input."""
        ...

    def prepare(self, records: Sequence[Record]) -> None:
        """Batch work for a chunk before its records run (local judges embed its texts)."""
        ...


@dataclass(frozen=True)
class ChunkResult:
    """One chunk's results, where it ran and the LLM usage it recorded.

    Attributes:
        results: One per record, in the chunk's order.
        worker: ``host:pid`` of the process that ran it.
        usage: LLM usage per judge role (:meth:`JudgeAccounting.snapshot`) during the chunk.
        usage_by_judge: The same per judge spec.
        seconds: Wall time the chunk took in the worker.
        cpu_s: The worker process's CPU seconds so far (all its chunks).
        peak_rss_mb: The worker process's peak resident memory so far.
    """

    results: list[ThreadResult]
    worker: str
    usage: dict[str, dict[str, float | int]] = field(default_factory=dict)
    usage_by_judge: dict[str, dict[str, float | int]] = field(default_factory=dict)
    seconds: float = 0.0
    cpu_s: float = 0.0
    peak_rss_mb: float = 0.0


def worker_name() -> str:
    """This process as a worker: ``host:pid``."""
    return f"{socket.gethostname()}:{os.getpid()}"


@dataclass
class _WorkerState:
    """What a worker process keeps between chunks of one run."""

    key: tuple[str, str | None]
    stack: ExitStack
    saver: BaseCheckpointSaver[str]
    graph: CompiledStateGraph[Any, Context, Any, Any]
    work: Any


_STATE: _WorkerState | None = None


def _worker_state(work: ChunkWork[Any], checkpoints: str | None) -> _WorkerState:
    """The process's checkpointer and compiled graph for ``work`` (opened on its first chunk)."""
    global _STATE
    key = (work.subsystem, checkpoints)
    if _STATE is not None and _STATE.key == key and _STATE.work == work:
        return _STATE
    if _STATE is not None:
        _STATE.stack.close()
    stack = ExitStack()
    saver = stack.enter_context(open_checkpointer(checkpoints))
    graph = work.build_graph().compile(checkpointer=saver, name=work.subsystem)
    configure_llm(policy_for(work.context))
    _STATE = _WorkerState(key, stack, saver, graph, work)
    return _STATE


def run_chunk(
    work: ChunkWork[R],
    checkpoints: str | None,
    records: Sequence[R],
    max_concurrency: int = 1,
) -> ChunkResult:
    """Run (or resume, or read back) each record's thread in this process; never raises for one.

    Args:
        work: The run's work.
        checkpoints: The checkpointer target every worker shares (see
            :func:`stores.checkpoint.open_checkpointer`).
        records: The chunk.
        max_concurrency: Records of the chunk run at once in threads (LLM judges wait on
            their providers; local judges want 1).
    """
    started = time.perf_counter()
    state = _worker_state(work, checkpoints)
    ACCOUNTING.reset()  # this chunk's usage only: the caller adds it to the run's
    names = ThreadNames.of(work.subsystem, work.context)

    def run_one(record: R) -> ThreadResult:
        return run_dialogue(
            state.graph,
            record,
            subsystem=work.subsystem,
            context=work.context,
            make_input=work.graph_input,
            output_keys=work.output_keys,
            names=names,
        )

    with batch_collection():
        work.prepare(records)
        ran = run_in_order(records, run_one, max_concurrency=max_concurrency)
        results = [result for _, result in ran if result is not None]
    worker = worker_name()
    used = resource.getrusage(resource.RUSAGE_SELF)
    return ChunkResult(
        results=[replace(result, worker=worker) for result in results],
        worker=worker,
        usage=ACCOUNTING.snapshot(),
        usage_by_judge=ACCOUNTING.by_judge(),
        seconds=time.perf_counter() - started,
        cpu_s=used.ru_utime + used.ru_stime,
        peak_rss_mb=used.ru_maxrss / 1024.0,
    )


def lost_chunk(records: Sequence[Any], why: str, worker: str = "") -> ChunkResult:
    """A chunk no worker could finish: each record failed with ``why`` (a rerun resumes it)."""
    return ChunkResult(
        results=[ThreadResult(record_id(record), "", None, why) for record in records],
        worker=worker,
    )


class Engine(Protocol[H]):
    """Where chunks run: submit one, collect its result (blocking), in any order."""

    @property
    def workers(self) -> int:
        """How many chunks run at once."""
        ...

    def submit(self, records: list[Any]) -> H:
        """Start a chunk."""
        ...

    def collect(self, handle: H) -> ChunkResult:
        """The chunk's result (blocking); an unfinished chunk is failed records, not an error.

        A chunk the engine could not finish (its worker died too often) comes back as
        :func:`lost_chunk`: the run goes on, and a rerun resumes those records.
        """
        ...


class ClosingEngine(Engine[Any], Protocol):
    """An engine the run stops when it is done (its workers, its connection)."""

    def close(self) -> None:
        """Stop the workers; chunks not started are dropped."""
        ...


@dataclass
class _Pending(Generic[H]):
    items: list[Any]
    """The chunk's records and, in their places, the unreadable ones (RecordError)."""
    handle: H | None


@dataclass
class WorkerLog:
    """What each worker process did in a run, for ``summary.json`` (``run.workers``)."""

    workers: dict[str, dict[str, float]] = field(default_factory=dict)

    def note(self, done: ChunkResult) -> None:
        """Count one finished chunk."""
        if not done.worker:
            return
        row = self.workers.setdefault(done.worker, {"records": 0, "chunks": 0, "busy_s": 0.0})
        row["records"] += len(done.results)
        row["chunks"] += 1
        row["busy_s"] += done.seconds
        row["cpu_s"] = done.cpu_s  # the process's own totals so far
        row["peak_rss_mb"] = max(row.get("peak_rss_mb", 0.0), done.peak_rss_mb)

    def rows(self) -> list[dict[str, Any]]:
        """One row per worker, rounded."""
        return [
            {"worker": name} | {key: round(value, 2) for key, value in row.items()}
            for name, row in sorted(self.workers.items())
        ]


def run_chunks(
    engine: Engine[H],
    records: Iterable[R | RecordError],
    *,
    chunk_size: int = CHUNK_SIZE,
    log: WorkerLog | None = None,
) -> Iterator[tuple[R | RecordError, ThreadResult | None]]:
    """``(record, result)`` for each record in input order, the chunks run by ``engine``.

    Records are read lazily, at most ``CHUNKS_PER_WORKER * engine.workers`` chunks ahead. A
    :class:`RecordError` passes through in its place with None. Each chunk's LLM usage is added
    to this process's :data:`~nodes.judges.accounting.ACCOUNTING` as it comes back, and what
    each worker did to ``log``.
    """
    iterator = iter(records)
    window: deque[_Pending[H]] = deque()
    limit = max(1, CHUNKS_PER_WORKER * engine.workers)

    def refill() -> None:
        while len(window) < limit:
            items = list(islice(iterator, chunk_size))
            if not items:
                return
            runnable = [item for item in items if not isinstance(item, RecordError)]
            window.append(_Pending(items, engine.submit(runnable) if runnable else None))

    refill()
    while window:
        pending = window.popleft()
        done = engine.collect(pending.handle) if pending.handle is not None else None
        refill()
        if done is not None:
            ACCOUNTING.add(done.usage, done.usage_by_judge)
            if log is not None:
                log.note(done)
        results = iter(done.results if done is not None else [])
        for item in pending.items:
            yield item, None if isinstance(item, RecordError) else next(results)
