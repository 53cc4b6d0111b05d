"""Record chunks run elsewhere: results in input order, usage merged, lost workers replaced."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import pytest

from tests.chunk_work import EchoWork, Item
from todeval.evals.results import ThreadResult
from todeval.evals.schema import RecordError
from todeval.graphs.chunk_runner import ChunkResult, run_chunks
from todeval.graphs.process_runner import MAX_ATTEMPTS, ProcessEngine
from todeval.graphs.runner import BATCH_GC_THRESHOLD
from todeval.nodes.judges.accounting import ACCOUNTING


class OutOfOrderEngine:
    """Runs a chunk in this process only when it is collected, newest submitted first."""

    workers = 2

    def __init__(self) -> None:
        self.submitted: list[list[Any]] = []

    def submit(self, records: list[Any]) -> int:
        self.submitted.append(records)
        return len(self.submitted) - 1

    def collect(self, handle: int) -> ChunkResult:
        # The chunks submitted after this one "finish" first: their results are made first.
        for later in range(len(self.submitted) - 1, handle, -1):
            self._results(later)
        return self._results(handle)

    def _results(self, handle: int) -> ChunkResult:
        records = self.submitted[handle]
        results = [ThreadResult(r.dialogue_id, f"t{r.dialogue_id}", {"n": r.text}) for r in records]
        usage = {"segmentation": {"calls": len(records), "prompt_tokens": 10}}
        return ChunkResult(results, worker=f"w{handle % 2}", usage=usage, usage_by_judge={})


def _items(n: int) -> list[Item]:
    return [Item(dialogue_id=f"d{i}", text=f"text {i}") for i in range(n)]


def test_results_come_back_in_input_order_with_unreadable_records_in_place() -> None:
    error = RecordError(file="in.jsonl", line=4, dialogue_id="bad", message="invalid JSON")
    records: list[Any] = [*_items(3), error, *_items(12)[3:]]
    ACCOUNTING.reset()
    engine = OutOfOrderEngine()
    out = list(run_chunks(engine, records, chunk_size=2))
    assert [item for item, _ in out] == records
    assert out[3][1] is None
    assert [result.dialogue_id for _, result in out if result is not None] == [
        r.dialogue_id for r in records if isinstance(r, Item)
    ]
    # Every chunk's usage, and only once.
    assert ACCOUNTING.snapshot()["segmentation"]["calls"] == 12
    assert ACCOUNTING.snapshot()["segmentation"]["prompt_tokens"] == 10 * len(engine.submitted)
    ACCOUNTING.reset()


def test_reading_stays_a_few_chunks_ahead_of_the_consumer() -> None:
    read: list[int] = []

    def records() -> Any:
        for i, item in enumerate(_items(100)):
            read.append(i)
            yield item

    stream = run_chunks(OutOfOrderEngine(), records(), chunk_size=4)
    next(stream)
    assert len(read) <= 4 * 2 * OutOfOrderEngine.workers + 4


def test_processes_give_each_record_its_result_in_order(tmp_path: Path) -> None:
    engine = ProcessEngine(EchoWork(tally=str(tmp_path / "tally")), ":memory:", workers=2)
    try:
        out = list(run_chunks(engine, _items(20), chunk_size=3))
    finally:
        engine.close()
    assert [result.output["echoed"] for _, result in out if result and result.output] == [
        f"TEXT {i}" for i in range(20)
    ]
    workers = {result.worker for _, result in out if result is not None}
    assert len(workers) >= 1 and None not in workers


def test_a_worker_keeps_the_batch_collection_thresholds_between_chunks(tmp_path: Path) -> None:
    # Between chunks Python's default thresholds ran ~820 collections a worker on SGD dev,
    # five of them full ones over every judge's objects.
    engine = ProcessEngine(EchoWork(tally=str(tmp_path / "tally")), ":memory:", workers=1)
    try:
        assert engine.collect(engine.submit(_items(2))).results  # a chunk has run and ended
        between = engine._pool.submit(gc.get_threshold).result(timeout=60)
    finally:
        engine.close()
    assert tuple(between) == BATCH_GC_THRESHOLD != gc.get_threshold()


def test_a_chunk_whose_worker_dies_runs_again_in_a_new_one(tmp_path: Path) -> None:
    tally = tmp_path / "tally"
    work = EchoWork(tally=str(tally), crash_on="d5", crashes=1)
    engine = ProcessEngine(work, str(tmp_path / "ckpt.sqlite"), workers=2)
    try:
        out = list(run_chunks(engine, _items(12), chunk_size=2))
    finally:
        engine.close()
    assert tally.read_text() == "x"  # d5's worker died once
    assert all(result is not None and result.error is None for _, result in out)
    assert [result.output["echoed"] for _, result in out if result and result.output] == [
        f"TEXT {i}" for i in range(12)
    ]


@pytest.mark.parametrize("crashes", [MAX_ATTEMPTS + 1])
def test_a_chunk_that_keeps_killing_its_worker_fails_with_the_reason(
    tmp_path: Path, crashes: int
) -> None:
    tally = tmp_path / "tally"
    work = EchoWork(tally=str(tally), crash_on="d0", crashes=crashes)
    engine = ProcessEngine(work, ":memory:", workers=1)
    try:
        out = list(run_chunks(engine, _items(4), chunk_size=2))
    finally:
        engine.close()
    lost = [result for _, result in out[:2] if result is not None]
    assert [r.status for r in lost] == ["failed", "failed"]
    assert all("WorkerLost" in (r.error or "") for r in lost)
    assert [result.output["echoed"] for _, result in out[2:] if result and result.output] == [
        "TEXT 2",
        "TEXT 3",
    ]
    assert len(tally.read_text()) == MAX_ATTEMPTS
