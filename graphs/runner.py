"""Batch runner: one checkpointed thread per dialogue, resumable, one bad record never stops a run.

A thread's id is derived from the subsystem, the dialogue id and a hash of the dialogue and the
run's context, so re-running the same command skips finished threads and resumes interrupted
ones from their last checkpoint, while a changed judge or a changed dialogue gets a new thread.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from itertools import islice
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph

from evals.schema import Dialogue, RecordError
from graphs.context import Context


@dataclass(frozen=True)
class ThreadResult:
    """What one dialogue's thread produced (``output``) or why it failed (``error``)."""

    dialogue_id: str
    thread_id: str
    output: dict[str, Any] | None
    error: str | None = None
    resumed: bool = False
    """True when the output came from an earlier run's finished thread."""


def thread_id_for(subsystem: str, dialogue: Dialogue, context: Context) -> str:
    """Stable id: same dialogue, same context -> same thread."""
    payload = json.dumps(
        [dialogue.model_dump(mode="json"), asdict(context)], sort_keys=True, default=str
    )
    digest = hashlib.sha256(payload.encode()).hexdigest()[:16]
    return f"{subsystem}:{dialogue.dialogue_id}:{digest}"


def run_dialogue(
    graph: CompiledStateGraph[Any, Context, Any, Any],
    dialogue: Dialogue,
    *,
    subsystem: str,
    context: Context,
    make_input: Callable[[Dialogue], dict[str, Any]],
    output_keys: Iterable[str],
) -> ThreadResult:
    """Run (or resume, or read back) one dialogue's thread."""
    thread_id = thread_id_for(subsystem, dialogue, context)
    config: RunnableConfig = {"configurable": {"thread_id": thread_id}}
    keys = list(output_keys)
    snapshot = graph.get_state(config)
    # Pending tasks without ``next`` = killed right after the input checkpoint: not finished.
    pending = bool(snapshot.next or snapshot.tasks)
    if snapshot.values and not pending:
        values = {key: snapshot.values[key] for key in keys if key in snapshot.values}
        return ThreadResult(dialogue.dialogue_id, thread_id, values, resumed=True)
    # An interrupted thread resumes from its last checkpoint (input None); a new one starts.
    graph_input = None if pending else make_input(dialogue)
    try:
        output = graph.invoke(graph_input, config, context=context)
    except Exception as error:  # noqa: BLE001 - one dialogue's failure must not stop the run
        return ThreadResult(
            dialogue.dialogue_id, thread_id, None, f"{type(error).__name__}: {error}"
        )
    return ThreadResult(dialogue.dialogue_id, thread_id, dict(output))


def run_corpus(
    graph: CompiledStateGraph[Any, Context, Any, Any],
    records: Iterable[Dialogue | RecordError],
    *,
    subsystem: str,
    context: Context,
    make_input: Callable[[Dialogue], dict[str, Any]],
    output_keys: Iterable[str],
) -> Iterator[tuple[Dialogue | RecordError, ThreadResult | None]]:
    """Yield each record with its thread's result (None for records that failed to load)."""
    keys = list(output_keys)
    for record in records:
        if isinstance(record, RecordError):
            yield record, None
            continue
        yield (
            record,
            run_dialogue(
                graph,
                record,
                subsystem=subsystem,
                context=context,
                make_input=make_input,
                output_keys=keys,
            ),
        )


def prepared_in_chunks(
    records: Iterable[Dialogue | RecordError],
    prepare: Callable[[Sequence[Dialogue]], None],
    size: int = 64,
) -> Iterator[Dialogue | RecordError]:
    """Yield ``records`` unchanged, calling ``prepare`` on each chunk of dialogues first.

    Lets a judge do batch work for many dialogues at once (local judges embed a whole chunk's
    texts in one large batch, about twice as fast as one small batch per dialogue).
    """
    iterator = iter(records)
    while chunk := list(islice(iterator, size)):
        prepare([record for record in chunk if isinstance(record, Dialogue)])
        yield from chunk
