"""``--workers N``: record chunks in N processes on this machine, results in input order.

Threads do not speed up local judges: their work holds the interpreter lock. Processes do. The
workers fork from a server process that has imported the graphs and judges once (the
``forkserver`` start method: a fork of a process with no threads), so a worker starts in well
under a second and shares those pages. Each worker opens its own connection to the run's
checkpointer (:func:`graphs.chunk_runner.run_chunk`) and embeds with one thread per core it has.

A worker that dies (killed, out of memory) breaks the pool: a new pool starts and every chunk
still out is submitted again (its finished threads are read back from the checkpoints). A chunk
whose worker died :data:`MAX_ATTEMPTS` times comes back as failed records with the reason.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import signal
from collections import Counter
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from todeval.graphs.chunk_runner import ChunkResult, ChunkWork, lost_chunk, run_chunk
from todeval.graphs.fork_server import PRELOAD
from todeval.graphs.runner import BATCH_GC_THRESHOLD
from todeval.nodes.judges.redact import error_text

MAX_ATTEMPTS = 3
"""Times a chunk is given to a new worker after the one running it died."""

EMBEDDING_THREADS = "TODEVAL_EMBEDDING_THREADS"
"""Environment variable: the embedder's threads in a worker (the cores shared out)."""


def _start_worker(threads: int) -> None:
    """Each worker process, before its first chunk.

    The worker keeps :data:`~graphs.runner.BATCH_GC_THRESHOLD` for its whole life, not only
    while a chunk runs: between chunks (sending a result, reading the next chunk) Python's
    default thresholds came back, and a warm SGD dev run made about 820 collections a worker
    there, five of them full ones over every judge's objects: about 0.85 CPU s a worker, half
    the time between its chunks. The worker's peak memory stayed the same (147 MB).
    """
    os.environ[EMBEDDING_THREADS] = str(threads)
    gc.set_threshold(*BATCH_GC_THRESHOLD)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the parent, which stops us


class ProcessEngine:
    """Chunks in a pool of worker processes (an :class:`~graphs.chunk_runner.Engine`).

    Args:
        work: The run's work (pickled to every worker).
        checkpoints: The checkpointer target the workers share.
        workers: Processes (at least 1).
        max_concurrency: Records a worker runs at once (threads, for LLM judges).
    """

    def __init__(
        self,
        work: ChunkWork[Any],
        checkpoints: str | None,
        workers: int,
        max_concurrency: int = 1,
    ) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self._work = work
        self._checkpoints = checkpoints
        self._workers = workers
        self._max_concurrency = max_concurrency
        self._chunks: dict[int, list[Any]] = {}
        self._futures: dict[int, Future[ChunkResult]] = {}
        self._attempts: Counter[int] = Counter()
        self._next = 0
        self._pool = self._new_pool()

    @property
    def workers(self) -> int:
        """Processes running chunks."""
        return self._workers

    def _new_pool(self) -> ProcessPoolExecutor:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(PRELOAD)
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
        threads = max(1, cores // self._workers)
        return ProcessPoolExecutor(
            self._workers, mp_context=context, initializer=_start_worker, initargs=(threads,)
        )

    def submit(self, records: list[Any]) -> int:
        """Start a chunk; its handle."""
        handle = self._next
        self._next += 1
        self._chunks[handle] = records
        self._futures[handle] = self._send(records)
        return handle

    def _send(self, records: list[Any]) -> Future[ChunkResult]:
        return self._pool.submit(
            run_chunk, self._work, self._checkpoints, records, self._max_concurrency
        )

    def collect(self, handle: int) -> ChunkResult:
        """The chunk's result; a worker lost on the way is replaced and the chunk sent again."""
        while True:
            try:
                result = self._futures[handle].result()
            except BrokenProcessPool:
                self._attempts[handle] += 1
                if self._attempts[handle] >= MAX_ATTEMPTS:
                    return lost_chunk(
                        self._forget(handle),
                        f"WorkerLost: the worker process running this record died "
                        f"{MAX_ATTEMPTS} times; re-run to resume it",
                    )
                self._restart()
                continue
            except Exception as error:  # noqa: BLE001 - the chunk fails, the run goes on
                return lost_chunk(self._forget(handle), error_text(error))
            self._forget(handle)
            return result

    def _forget(self, handle: int) -> list[Any]:
        self._futures.pop(handle)
        return self._chunks.pop(handle)

    def _restart(self) -> None:
        """A new pool, with every chunk still out sent again, oldest first."""
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._pool = self._new_pool()
        for handle in sorted(self._futures):
            future = self._futures[handle]
            if future.cancelled() or (future.done() and future.exception() is not None):
                self._futures[handle] = self._send(self._chunks[handle])

    def close(self) -> None:
        """Stop the workers (chunks not started are dropped)."""
        self._pool.shutdown(wait=True, cancel_futures=True)
