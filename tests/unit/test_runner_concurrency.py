"""``run_corpus(max_concurrency=N)``: input order, bounded read-ahead, errors in place, resume."""

from __future__ import annotations

import contextvars
import random
import threading
import time
import weakref
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from pydantic import BaseModel
from typing_extensions import TypedDict

from todeval.evals.results import ThreadResult
from todeval.evals.schema import RecordError
from todeval.graphs.runner import READ_AHEAD, prepared_in_chunks, record_turns, run_corpus
from todeval.nodes.context import Context
from todeval.stores.checkpoint import open_checkpointer

N = 4
CONTEXT = Context()
CALLER = contextvars.ContextVar("CALLER", default="unset")
"""Stands for what a caller keeps in context variables (a tracing parent run, say)."""


class Item(BaseModel):
    """A record with an id, as the runner wants."""

    eval_id: str
    value: int
    fail: bool = False


class SquareInput(TypedDict):
    value: int
    fail: bool


class SquareOutput(TypedDict):
    square: int
    caller: str


class SquareState(SquareInput, SquareOutput):
    pass


class Probe:
    """Counts node runs per value and the most nodes ever running at once."""

    def __init__(self) -> None:
        self.calls: Counter[int] = Counter()
        self.active = 0
        self.peak = 0
        self.lock = threading.Lock()

    def square(self, state: SquareState) -> dict[str, Any]:
        with self.lock:
            self.calls[state["value"]] += 1
            self.active += 1
            self.peak = max(self.peak, self.active)
        try:
            time.sleep(random.uniform(0.01, 0.04))
            if state.get("fail"):
                raise ValueError(f"cannot square {state['value']}")
            return {"square": state["value"] ** 2, "caller": CALLER.get()}
        finally:
            with self.lock:
                self.active -= 1


def build(probe: Probe, saver: BaseCheckpointSaver[str]) -> CompiledStateGraph[Any, Any, Any, Any]:
    builder = StateGraph(
        SquareState, context_schema=Context, input_schema=SquareInput, output_schema=SquareOutput
    )
    builder.add_node("square", probe.square)
    builder.add_edge(START, "square")
    builder.add_edge("square", END)
    return builder.compile(checkpointer=saver)


def run(
    graph: CompiledStateGraph[Any, Any, Any, Any],
    records: Iterable[Item | RecordError],
    max_concurrency: int,
) -> Iterator[tuple[Item | RecordError, ThreadResult | None]]:
    return run_corpus(
        graph,
        records,
        subsystem="square",
        context=CONTEXT,
        make_input=lambda item: {"value": item.value, "fail": item.fail},
        output_keys=["square", "caller"],
        max_concurrency=max_concurrency,
    )


def corpus(count: int = 20) -> list[Item | RecordError]:
    """Items 0..count-1; item 7 fails in its node, and two unreadable records sit in between."""
    records: list[Item | RecordError] = [
        Item(eval_id=f"item-{n}", value=n, fail=n == 7) for n in range(count)
    ]
    records.insert(3, RecordError(file="in.jsonl", line=4, message="not JSON"))
    records.insert(12, RecordError(file="in.jsonl", line=13, field="value", message="missing"))
    return records


def shape(results: list[tuple[Item | RecordError, ThreadResult | None]]) -> list[Any]:
    """What a consumer sees, without the flags that legitimately differ between runs."""
    return [
        ("error", str(record))
        if result is None
        else (result.dialogue_id, result.output, result.error and result.error.split(":")[0])
        for record, result in results
    ]


@pytest.fixture(params=["memory", "sqlite"])
def checkpoints(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return ":memory:" if request.param == "memory" else str(tmp_path / "ckpt.sqlite")


def test_concurrent_run_matches_the_sequential_one_in_input_order(checkpoints: str) -> None:
    records = corpus()
    with open_checkpointer(":memory:") as saver:
        sequential = list(run(build(Probe(), saver), records, 1))
    probe = Probe()
    with open_checkpointer(checkpoints) as saver:
        concurrent = list(run(build(probe, saver), iter(records), N))

    assert [record for record, _ in concurrent] == records
    assert shape(concurrent) == shape(sequential)
    assert probe.peak > 1, "nothing ran at the same time"
    assert probe.peak <= N
    by_id = {r.dialogue_id: r for _, r in concurrent if r is not None}
    assert by_id["item-5"].output == {"square": 25, "caller": "unset"}
    assert by_id["item-5"].error is None
    failed = by_id["item-7"]
    assert failed.output is None and failed.error == "ValueError: cannot square 7"
    assert sum(1 for _, r in concurrent if r is None) == 2
    assert not any(r.resumed for _, r in concurrent if r is not None)


def test_second_concurrent_run_reads_every_finished_thread_back(tmp_path: Path) -> None:
    records = corpus()
    probe = Probe()
    checkpoints = tmp_path / "ckpt.sqlite"
    with open_checkpointer(checkpoints) as saver:
        first = list(run(build(probe, saver), records, N))
    calls_after_first = Counter(probe.calls)
    with open_checkpointer(checkpoints) as saver:  # a new connection, as a rerun opens
        second = list(run(build(probe, saver), records, N))

    assert shape(second) == shape(first)
    finished = [r for _, r in second if r is not None and r.error is None]
    assert len(finished) == 19 and all(r.resumed for r in finished)
    # Only the failed thread runs again (from its checkpoint, and fails again).
    assert probe.calls - calls_after_first == Counter({7: 1})


def test_rerun_on_the_same_saver_resumes_in_memory_too() -> None:
    records = corpus(8)
    probe = Probe()
    with open_checkpointer(":memory:") as saver:
        graph = build(probe, saver)
        list(run(graph, records, N))
        second = list(run(graph, records, N))
    resumed = [r.resumed for _, r in second if r is not None and r.error is None]
    assert resumed and all(resumed)
    assert probe.calls[0] == 1 and probe.calls[7] == 2


def test_read_ahead_stays_within_its_bound() -> None:
    consumed = 0

    def endless() -> Iterator[Item]:
        nonlocal consumed
        for n in range(10_000):
            consumed += 1
            yield Item(eval_id=f"item-{n}", value=n)

    seen_at: list[int] = []
    with open_checkpointer(":memory:") as saver:
        stream = run(build(Probe(), saver), endless(), N)
        for index, (_, result) in enumerate(stream):
            assert result is not None and result.dialogue_id == f"item-{index}"
            seen_at.append(consumed)
            if index == 11:
                break
        stream.close()  # type: ignore[attr-defined]  # the generator behind the iterator
    assert len(seen_at) == 12
    # Record i is yielded with at most READ_AHEAD * N records read behind it.
    assert all(count <= index + READ_AHEAD * N for index, count in enumerate(seen_at)), seen_at
    assert seen_at[0] > 1, "no read-ahead at all: the records ran one by one"
    assert consumed <= 12 + READ_AHEAD * N


def test_same_record_twice_runs_once_and_is_read_back_the_second_time() -> None:
    item = Item(eval_id="twin", value=3)
    probe = Probe()
    with open_checkpointer(":memory:") as saver:
        results = list(run(build(probe, saver), [item, item, Item(eval_id="x", value=2)], N))
    (_, first), (_, second), _ = results
    assert first is not None and second is not None
    assert first.output == second.output == {"square": 9, "caller": "unset"}
    assert (first.resumed, second.resumed) == (False, True)
    assert probe.calls[3] == 1


def test_an_input_that_breaks_mid_way_yields_what_came_before_then_raises() -> None:
    def broken() -> Iterator[Item]:
        for n in range(5):
            yield Item(eval_id=f"item-{n}", value=n)
        raise OSError("disk gone")

    seen: list[str] = []
    with open_checkpointer(":memory:") as saver, pytest.raises(OSError, match="disk gone"):
        for _, result in run(build(Probe(), saver), broken(), N):
            assert result is not None
            seen.append(result.dialogue_id)
    assert seen == [f"item-{n}" for n in range(5)]


def test_prepared_in_chunks_feeds_the_concurrent_runner_from_the_consumer_thread() -> None:
    records = corpus(15)
    prepared: list[list[str]] = []
    threads: set[str] = set()

    def prepare(items: Sequence[Item]) -> None:
        prepared.append([item.eval_id for item in items])
        threads.add(threading.current_thread().name)

    with open_checkpointer(":memory:") as saver:
        results = list(
            run(build(Probe(), saver), prepared_in_chunks(records, prepare, size=4), N)  # type: ignore[arg-type]
        )
    assert [record for record, _ in results] == records
    assert [name for chunk in prepared for name in chunk] == [f"item-{n}" for n in range(15)]
    assert threads == {threading.current_thread().name}


def test_prepared_in_chunks_holds_no_record_it_handed_out() -> None:
    def items() -> Iterator[Item | RecordError]:
        yield from (Item(eval_id=f"item-{n}", value=n) for n in range(8))

    chunks = prepared_in_chunks(items(), lambda chunk: None, size=4)
    first = next(chunks)
    gone = weakref.ref(first)
    del first
    assert gone() is None  # the rest of its chunk is still to come
    assert [item.eval_id for item in chunks if isinstance(item, Item)] == [
        f"item-{n}" for n in range(1, 8)
    ]


def test_max_concurrency_below_one_is_refused() -> None:
    with open_checkpointer(":memory:") as saver, pytest.raises(ValueError, match="at least 1"):
        next(run(build(Probe(), saver), corpus(2), 0))


def test_workers_see_the_callers_context_variables() -> None:
    token = CALLER.set("evaluate")
    try:
        with open_checkpointer(":memory:") as saver:
            results = list(run(build(Probe(), saver), corpus(6), N))
    finally:
        CALLER.reset(token)
    outputs = [r.output for _, r in results if r is not None and r.output is not None]
    assert len(outputs) == 6 and {o["caller"] for o in outputs} == {"evaluate"}


class Talk(BaseModel):
    """A record with turns, as a dialogue is."""

    eval_id: str
    turns: list[str]


class Wrapped(BaseModel):
    """A record whose turns are its dialogue's, as an evaluation record's are."""

    eval_id: str
    dialogue: Talk


def test_a_chunk_ends_at_its_turn_budget_or_its_size() -> None:
    lengths = [3, 3, 3, 10, 1, 1, 1, 1, 1, 2]
    records: list[Talk | RecordError] = [
        Talk(eval_id=f"t{n}", turns=["x"] * length) for n, length in enumerate(lengths)
    ]
    records.insert(1, RecordError(file="f", message="unreadable"))  # holds no turns
    prepared: list[list[str]] = []

    def prepare(chunk: Sequence[Talk | RecordError]) -> None:
        prepared.append([talk.eval_id for talk in chunk if isinstance(talk, Talk)])

    handed = list(prepared_in_chunks(records, prepare, size=4, turns=6))
    assert handed == records
    # t0+t1 reach 6 turns; t2 alone is under, t3 takes it past; then 4 records; then the rest.
    assert prepared == [["t0", "t1"], ["t2", "t3"], ["t4", "t5", "t6", "t7"], ["t8", "t9"]]


def test_record_turns_counts_a_record_or_its_dialogue() -> None:
    talk = Talk(eval_id="a", turns=["x", "y"])
    assert record_turns(talk) == 2
    assert record_turns(Wrapped(eval_id="b", dialogue=talk)) == 2
    assert record_turns(Item(eval_id="c", value=1)) == 1
    assert record_turns(RecordError(file="f", message="unreadable")) == 0
