"""Batch runner: one checkpointed thread per dialogue, resumable, one bad record never stops a run.

A thread's id is derived from the subsystem, the dialogue id and a hash of the dialogue, the
run's context (its judging fields: timeouts, limits and budgets do not count) and the judges'
build (the release and its shipped models), so re-running the same command skips finished
threads and resumes interrupted ones from their last checkpoint, while a changed judge, an
upgrade or a changed dialogue gets a new thread. A thread with LLM labels left
unanswered (failed calls, a budget, a dry run) is not kept: the next run asks those again. Its
checkpoints carry those calls in their metadata (:data:`UNANSWERED_KEY`), so a process killed
after the last checkpoint but before the thread was dropped leaves nothing the next run keeps.
"""

from __future__ import annotations

import contextvars
import gc
import hashlib
import importlib
import json
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_for
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache, partial
from typing import Any, Literal, TypeVar, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.constants import CONFIG_KEY_CHECKPOINTER
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, StateSnapshot
from pydantic import BaseModel

from todeval.evals.results import ThreadResult
from todeval.evals.schema import RecordError
from todeval.nodes.context import Context, judging_fields
from todeval.nodes.judges.build import judges_build
from todeval.nodes.judges.limits import watch_unanswered
from todeval.nodes.judges.redact import error_text
from todeval.stores.checkpoint import StampedSaver

R = TypeVar("R", bound=BaseModel)
"""A record with an id (see :func:`record_id`): a dialogue, an ATOD dialogue, a memory item …"""

D = TypeVar("D", bound=BaseModel)
"""A record whose texts a judge can prepare in batches."""

Durability = Literal["exit", "sync"]
"""When a thread's checkpoints are written: ``exit`` once, when it finishes or pauses (a killed
record restarts, and the LLM response cache makes its judge calls free); ``sync`` after every
step (a live conversation or a long pipeline continues from the step that stopped it)."""

READ_AHEAD = 8
"""Records read ahead per worker: one record stuck in LLM retries must not idle the others
(at 2 per worker a 30 % fault run took twice as long), while memory stays bounded."""

#: The fields that name a record, in the order they are looked for.
ID_FIELDS = ("dialogue_id", "eval_id")


def record_id(record: BaseModel) -> str:
    """The record's id: its ``dialogue_id`` or ``eval_id``."""
    for name in ID_FIELDS:
        value = getattr(record, name, None)
        if isinstance(value, str) and value:
            return value
    raise TypeError(f"{type(record).__name__} has none of the id fields {ID_FIELDS}")


@cache
def _declare_every_setting() -> None:
    """Import every subsystem's roles and settings: the thread hash reads all of them."""
    for name in SETTINGS_DECLARED_BY:
        importlib.import_module(f"todeval.nodes.{name}.roles")
        importlib.import_module(f"todeval.nodes.{name}.settings")


SETTINGS_DECLARED_BY = (
    "goal_success",
    "goal_tracking",
    "goal_shift",
    "memory",
    "proactive",
    "simulation",
)
"""The node packages that declare judge roles and settings (``roles.py``, ``settings.py``)."""


def context_summary(context: Context) -> dict[str, Any]:
    """The run's context for ``summary.json``: every declared role and subsystem setting."""
    _declare_every_setting()
    return context.dump()


def thread_id_for(subsystem: str, record: BaseModel, context: Context) -> str:
    """Stable id: same record, same context, same judges' build -> same thread."""
    return ThreadNames.of(subsystem, context).thread_id(record)


@dataclass(frozen=True)
class ThreadNames:
    """Names one run's threads: the run's half of the hash is read once, not per record.

    A thread id hashes ``json.dumps([record, judging fields, judges' build], sort_keys=True)``;
    the last two are the same for every record of a run (reading the fields took about a
    third of the time of naming a thread).
    """

    subsystem: str
    run_json: str
    """``judging fields, judges' build`` as they stand in the hashed list."""

    @classmethod
    def of(cls, subsystem: str, context: Context) -> ThreadNames:
        """The names of ``subsystem``'s threads under ``context``."""
        _declare_every_setting()
        parts = (judging_fields(context), judges_build())
        return cls(subsystem, ", ".join(_hashed_json(part) for part in parts))

    def thread_id(self, record: BaseModel) -> str:
        """``subsystem:record id:hash`` of ``record`` in this run.

        The record's JSON dump is kept for :func:`record_json` (its graph input, next).
        """
        dumped = record.model_dump(mode="json")
        # The list's JSON written out: "[" + items joined by json's ", " + "]".
        payload = f"[{_hashed_json(dumped)}, {self.run_json}]"
        digest = hashlib.sha256(payload.encode()).hexdigest()[:16]
        _DUMPED.held = (record, dumped)
        return f"{self.subsystem}:{record_id(record)}:{digest}"


def _hashed_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


_DUMPED = threading.local()
"""This thread's last record named by :meth:`ThreadNames.thread_id`, with its JSON dump."""


def record_json(record: BaseModel) -> dict[str, Any]:
    """``record.model_dump(mode="json")``, for a graph input.

    The dump made to name ``record``'s thread is handed out once, if ``record`` was the last
    record this thread named (a record's graph input is built right after its thread is
    named): dumping an SGD record takes about as long as hashing it. Otherwise a new dump.
    """
    held: tuple[BaseModel, dict[str, Any]] | None = getattr(_DUMPED, "held", None)
    _DUMPED.held = None
    if held is not None and held[0] is record:
        return held[1]
    return record.model_dump(mode="json")


def run_dialogue(
    graph: CompiledStateGraph[Any, Context, Any, Any],
    dialogue: R,
    *,
    subsystem: str,
    context: Context,
    make_input: Callable[[R], dict[str, Any]],
    output_keys: Iterable[str],
    durability: Durability = "exit",
    names: ThreadNames | None = None,
) -> ThreadResult:
    """Run (or resume, or read back) one dialogue's thread.

    ``names`` (the run's :class:`ThreadNames`, for ``subsystem`` and ``context``) saves reading
    the run's settings again for each dialogue.
    """
    names = names or ThreadNames.of(subsystem, context)
    thread_id = names.thread_id(dialogue)
    config: RunnableConfig = {"configurable": {"thread_id": thread_id}}
    keys = list(output_keys)
    name = record_id(dialogue)
    snapshot = graph.get_state(config)
    if snapshot.interrupts:
        # Never invoke a paused thread with None: LangGraph would resume it with the last answer.
        return paused_result(graph, name, thread_id, keys, resumed=True)
    # Pending tasks without ``next`` = killed right after the input checkpoint: not finished.
    pending = bool(snapshot.next or snapshot.tasks)
    # Unanswered calls of an earlier, killed invocation, read from its last checkpoint.
    earlier: list[str] = list(cast("list[str]", (snapshot.metadata or {}).get(UNANSWERED_KEY, [])))
    saver = cast("BaseCheckpointSaver[Any] | None", graph.checkpointer)
    if earlier and not pending and saver is not None:
        # Finished with unanswered calls but killed before it was dropped: drop it now.
        saver.delete_thread(thread_id)
        snapshot, earlier = graph.get_state(config), []
    if snapshot.values and not pending:
        values = {key: snapshot.values[key] for key in keys if key in snapshot.values}
        return ThreadResult(name, thread_id, values, resumed=True)
    # An interrupted thread resumes from its last checkpoint (input None); a new one starts.
    # durability="exit" (the default) is about 40% faster on local judges than one checkpoint
    # per step.
    graph_input = None if pending else make_input(dialogue)
    try:
        with watch_unanswered() as unanswered:
            unanswered.extend(earlier)
            if saver is not None:
                # Every checkpoint written carries the calls left unanswered so far, so a kill
                # after the last one (before the thread is dropped below) cannot keep it.
                stamped = StampedSaver(saver, partial(_unanswered_stamp, unanswered))
                config["configurable"][CONFIG_KEY_CHECKPOINTER] = stamped
            output = graph.invoke(graph_input, config, context=context, durability=durability)
    except Exception as error:  # noqa: BLE001 - one dialogue's failure must not stop the run
        return ThreadResult(name, thread_id, None, error_text(error))  # keys echoed by a provider
    if "__interrupt__" in output:
        return paused_result(graph, name, thread_id, keys)
    if unanswered and saver is not None:
        # Labels an LLM did not answer (failed, refused, dry run) are asked again next run;
        # the response cache answers the rest of the thread's calls.
        saver.delete_thread(thread_id)
    return ThreadResult(name, thread_id, dict(output), unanswered=list(unanswered))


UNANSWERED_KEY = "todeval_unanswered"
"""Checkpoint metadata: the reasons of the LLM calls a thread left unanswered so far. A finished
thread that has them is dropped (and run again) whenever it is found."""


def _unanswered_stamp(unanswered: list[str]) -> dict[str, Any]:
    return {UNANSWERED_KEY: list(unanswered)} if unanswered else {}


def paused_result(
    graph: CompiledStateGraph[Any, Context, Any, Any],
    dialogue_id: str,
    thread_id: str,
    output_keys: Iterable[str],
    *,
    resumed: bool = False,
) -> ThreadResult:
    """A paused thread's values so far, its paused subgraphs' values and its open questions."""
    config: RunnableConfig = {"configurable": {"thread_id": thread_id}}
    snapshot = graph.get_state(config, subgraphs=True)
    values = {key: snapshot.values[key] for key in output_keys if key in snapshot.values}
    values["subgraphs"] = {
        task.name: dict(task.state.values)
        for task in snapshot.tasks
        if isinstance(task.state, StateSnapshot)
    }
    interrupts = [{"id": item.id, "value": item.value} for item in snapshot.interrupts]
    return ThreadResult(dialogue_id, thread_id, values, resumed=resumed, interrupts=interrupts)


def pending_interrupts(
    graph: CompiledStateGraph[Any, Context, Any, Any], thread_id: str
) -> list[dict[str, Any]]:
    """The questions a thread waits on (``{"id", "value"}``), read from the checkpointer."""
    snapshot = graph.get_state({"configurable": {"thread_id": thread_id}})
    return [{"id": item.id, "value": item.value} for item in snapshot.interrupts]


def resume_thread(
    graph: CompiledStateGraph[Any, Context, Any, Any],
    thread_id: str,
    interrupt_id: str,
    answer: Any,
    *,
    context: Context,
) -> list[dict[str, Any]]:
    """Answer one open question of a paused thread; returns the questions still open after it."""
    config: RunnableConfig = {"configurable": {"thread_id": thread_id}}
    graph.invoke(Command(resume={interrupt_id: answer}), config, context=context)
    return pending_interrupts(graph, thread_id)


def run_corpus(
    graph: CompiledStateGraph[Any, Context, Any, Any],
    records: Iterable[R | RecordError],
    *,
    subsystem: str,
    context: Context,
    make_input: Callable[[R], dict[str, Any]],
    output_keys: Iterable[str],
    max_concurrency: int = 1,
    durability: Durability = "exit",
) -> Iterator[tuple[R | RecordError, ThreadResult | None]]:
    """Yield each record with its thread's result (None for records that failed to load).

    Args:
        graph: The subsystem graph, compiled with a checkpointer.
        records: The corpus, read lazily (at most ``READ_AHEAD * max_concurrency`` ahead).
        subsystem: Names the threads (see :func:`thread_id_for`).
        context: The run's context, passed to every thread.
        make_input: A record's graph input.
        output_keys: The state keys a finished thread reports.
        max_concurrency: Records run at once in worker threads; results still come in input
            order. 1 runs them one after another in the caller's thread.
        durability: When each thread's checkpoints are written (:data:`Durability`).
    """
    keys = list(output_keys)
    names = ThreadNames.of(subsystem, context)

    def run_one(record: R) -> ThreadResult:
        return run_dialogue(
            graph,
            record,
            subsystem=subsystem,
            context=context,
            make_input=make_input,
            output_keys=keys,
            durability=durability,
            names=names,
        )

    return run_in_order(records, run_one, max_concurrency=max_concurrency)


def run_in_order(
    records: Iterable[R | RecordError],
    run_one: Callable[[R], ThreadResult],
    *,
    max_concurrency: int = 1,
) -> Iterator[tuple[R | RecordError, ThreadResult | None]]:
    """``(record, run_one(record))`` for each record, in input order, up to N running at once.

    Records are read lazily, at most ``READ_AHEAD * max_concurrency`` ahead of the consumer, so
    memory stays flat however long the corpus. A :class:`RecordError` passes through in its
    place with None. Records with the same id run one after the other (they may share a
    thread, which two concurrent runs would corrupt). An exception from ``run_one`` is raised
    when its record's turn comes; one from the input after the records read before it have
    been yielded.

    Raises:
        ValueError: ``max_concurrency`` is below 1.
    """
    if max_concurrency < 1:
        raise ValueError(f"max_concurrency must be at least 1, got {max_concurrency}")
    if max_concurrency == 1:
        for record in records:
            yield record, None if isinstance(record, RecordError) else run_one(record)
        return

    iterator = iter(records)
    window: deque[tuple[R | RecordError, Future[ThreadResult] | None]] = deque()
    latest: dict[str, Future[ThreadResult]] = {}  # each record id's last submitted run
    more = True
    input_error: Exception | None = None
    pool = ThreadPoolExecutor(max_concurrency, thread_name_prefix="todeval-runner")

    def submit(record: R) -> Future[ThreadResult]:
        name = record_id(record)
        earlier = latest.get(name)

        def task() -> ThreadResult:
            if earlier is not None:
                # FIFO pool: ``earlier`` started before this task, so waiting cannot deadlock.
                wait_for([earlier])
            return run_one(record)

        # The caller's context variables (a tracing parent run, say) reach the worker.
        future = pool.submit(contextvars.copy_context().run, task)
        latest[name] = future
        return future

    try:
        while True:
            while more and len(window) < READ_AHEAD * max_concurrency:
                try:
                    record = next(iterator)
                except StopIteration:
                    more = False
                    break
                except Exception as error:  # noqa: BLE001 - raised after the records before it
                    more = False
                    input_error = error
                    break
                if isinstance(record, RecordError):
                    window.append((record, None))
                else:
                    window.append((record, submit(record)))
            if not window:
                break
            record, future = window.popleft()
            if future is None:
                yield record, None
                continue
            if not isinstance(record, RecordError) and latest.get(record_id(record)) is future:
                del latest[record_id(record)]
            yield record, future.result()
        if input_error is not None:
            raise input_error
    finally:
        # A consumer that stops early: drop what has not started, wait for what has.
        pool.shutdown(wait=True, cancel_futures=True)


BATCH_GC_THRESHOLD = (50_000, 20, 20)
"""Garbage-collector thresholds while a batch runs (Python's default is ``(700, 10, 10)``).

A record allocates tens of thousands of short-lived containers (pydantic models, dicts, numpy
wrappers), so the default collects every few hundred of them and re-walks the objects that
survive. Collecting every 50,000 took 8-10 % less CPU on a warm SGD dev run (1,041 young
collections per 600 dialogues became 22) with the same peak memory; reference counting still
frees almost everything the moment it is done with."""


@contextmanager
def batch_collection() -> Iterator[None]:
    """:data:`BATCH_GC_THRESHOLD` inside the block, the process's own thresholds after it."""
    before = gc.get_threshold()
    gc.set_threshold(*BATCH_GC_THRESHOLD)
    try:
        yield
    finally:
        gc.set_threshold(*before)


PREPARE_CHUNK = 16
"""Dialogues prepared (embedded) together in one process, as a worker's chunk is. 64 set the
run's peak memory: late SGD dev dialogues are long (24 turns on average, up to 58), and a
batch of 64 of them held about 15 MB of read-ahead records and vectors; with 16 a warm 1-worker
run of all 2,482 peaks 6 % above its first 248's (it was 12 %), at the same CPU."""

PREPARE_TURNS = 64
"""Turns a chunk holds at most (past its first record). Chunks of 16 records held twice as
much late in SGD dev as early on: its dialogues 2,049-2,208 have 16 turns on average (up to 29),
its first 248 have 7, and a chunk's records, texts and vectors grow with the turns (a
turn-quality text holds the turns before it). 64 turns is about 9 early dialogues, 4 late
ones. A warm 1-worker run of all 2,482 records itself peaks about 4 MB lower than with 16
records a chunk (168.6 against 172.5 MB; 96 and 128 turns: 168.8 and 169.5), its first 248 as
before (163.8 against 164.0), at the same CPU. With the goal-success report section reading
its failed goals one at a time (it unpacked all 500 after the run, +4 MB), the whole command
peaks 3 % above its first 248's (``make bench``: 160.3 -> 165.2 MB)."""


def record_turns(record: BaseModel | RecordError) -> int:
    """The turns ``record`` holds (its own or its dialogue's), 1 for a record without any.

    Measures a chunk in :func:`prepared_in_chunks`; an error is prepared for nothing (0).
    """
    if isinstance(record, RecordError):
        return 0
    turns = getattr(getattr(record, "dialogue", record), "turns", None)
    return len(turns) if isinstance(turns, list) else 1


def prepared_in_chunks(
    records: Iterable[D | RecordError],
    prepare: Callable[[Sequence[D]], None],
    size: int = PREPARE_CHUNK,
    turns: int = PREPARE_TURNS,
) -> Iterator[D | RecordError]:
    """Yield ``records`` unchanged, calling ``prepare`` on each chunk of dialogues first.

    Lets a judge do batch work for many dialogues at once (local judges embed a whole chunk's
    texts in one large batch, about twice as fast as one small batch per dialogue). A chunk
    ends at ``size`` records or once its records hold ``turns`` turns (:func:`record_turns`),
    whichever comes first: memory follows the texts held, not the records.

    A record handed out is no longer held here: the whole chunk was kept until its last record
    had run and the next chunk had been read beside it (16 late SGD dev dialogues hold about
    2.4 MB).
    """
    iterator = iter(records)
    while chunk := _next_chunk(iterator, size, turns):
        prepare([record for record in chunk if not isinstance(record, RecordError)])
        chunk.reverse()
        while chunk:
            yield chunk.pop()


def _next_chunk(
    iterator: Iterator[D | RecordError], size: int, turns: int
) -> list[D | RecordError]:
    chunk: list[D | RecordError] = []
    held = 0
    for record in iterator:
        chunk.append(record)
        held += record_turns(record)
        if len(chunk) >= size or held >= turns:
            break
    return chunk
