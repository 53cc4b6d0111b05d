"""``--cluster``: record chunks as tasks on a Ray cluster, results in input order.

Why Ray: chunks of records are independent tasks, and Ray runs such tasks on any number of
machines with nothing of ours in between: its scheduler places them by free CPUs, its object
store carries the records and results, and a task whose worker dies (a killed process, a lost
node) is run again on another (``max_retries``). It starts from ``pip install`` on a laptop
(``ray start --head``), and the same cluster runs on Kubernetes (KubeRay), Slurm or a cloud's
VMs. Each task is :func:`graphs.chunk_runner.run_chunk`, the same as a local worker process's:
with a shared Postgres checkpointer any task resumes any thread, so a rerun task reads back
what its lost predecessor finished, and the figures are those of one process.

The workers get todeval's settings through the job's ``runtime_env``: the driver's
``TODEVAL_HOME`` (the embedding cache: shared where the nodes share a file system, else one per
node), the offline and telemetry switches, and one embedding and one BLAS thread per task (a
task holds one CPU). API keys for LLM judges are not sent: set them in the nodes' environment.
Each worker process starts with :func:`start_worker` (the job's ``worker_process_setup_hook``).
"""

from __future__ import annotations

import gc
import logging
import os
import time
from types import ModuleType
from typing import Any

from todeval.graphs.chunk_runner import ChunkResult, ChunkWork, lost_chunk, run_chunk
from todeval.graphs.runner import BATCH_GC_THRESHOLD
from todeval.nodes.judges.redact import error_text
from todeval.stores.paths import todeval_home

CONNECT_ATTEMPTS = 3
"""Times the driver tries to connect when the head answers but refuses: Ray Client's head starts
one server per driver, and that start can fail on a busy head (``Starting Ray client server
failed``) and work a moment later. A head that does not answer is not tried again."""

CONNECT_BACKOFF_S = 2.0
"""Wait before the second attempt (doubled before each further one)."""

MAX_RETRIES = 3
"""Times Ray runs a chunk again after the worker running it died."""

FORWARDED_PREFIXES = ("TODEVAL_", "LANGSMITH_TRACING", "LANGCHAIN_TRACING")
"""The driver's environment variables the workers get (settings, never credentials)."""

OFFLINE = {
    "HF_HUB_OFFLINE": "1",
    "ORT_DISABLE_TELEMETRY": "1",
    "ANONYMIZED_TELEMETRY": "False",
    "RAY_USAGE_STATS_ENABLED": "0",
}


WORKER_SETUP = "todeval.graphs.ray_runner.start_worker"
"""The job's ``worker_process_setup_hook``: Ray imports it by name in each worker process."""


def start_worker() -> None:
    """Each Ray worker process of a run, before its first task.

    It keeps :data:`~graphs.runner.BATCH_GC_THRESHOLD` for its whole life, as a ``--workers``
    process does (:func:`graphs.process_runner._start_worker`): with Python's defaults back
    between chunks, a worker made hundreds of collections there, some of them full ones over
    every judge's objects.
    """
    gc.set_threshold(*BATCH_GC_THRESHOLD)


class ClusterError(RuntimeError):
    """The cluster cannot be used (not reachable, Ray not installed): one line for the user."""


def _ray() -> ModuleType:
    try:
        import ray
    except ImportError as error:
        raise ClusterError(
            "--cluster needs Ray: pip install -e '.[cluster]' (the cluster extra pins it)"
        ) from error
    return ray


def worker_environment() -> dict[str, str]:
    """What a task's process needs of the driver's environment."""
    forwarded = {k: v for k, v in os.environ.items() if k.startswith(FORWARDED_PREFIXES)}
    return (
        OFFLINE
        | forwarded
        | {
            "TODEVAL_HOME": str(todeval_home().resolve()),
            "TODEVAL_EMBEDDING_THREADS": "1",
            "OPENBLAS_NUM_THREADS": "1",  # as the CLI sets it (cli.main): a task holds one CPU
        }
    )


def _connect(ray: ModuleType, address: str) -> None:
    """``ray.init`` on ``address``, tried again after a refused connection.

    Raises:
        ClusterError: No attempt connected (the message has the last error).
    """
    for attempt in range(CONNECT_ATTEMPTS):
        try:
            ray.init(
                address=address,
                namespace="todeval",
                runtime_env={
                    "env_vars": worker_environment(),
                    "worker_process_setup_hook": WORKER_SETUP,
                },
                log_to_driver=False,
                logging_level=logging.WARNING,
            )
            return
        except ConnectionAbortedError as error:  # the head answered but could not serve us yet
            if attempt + 1 == CONNECT_ATTEMPTS:
                raise ClusterError(
                    f"no Ray cluster answers at {address} ({CONNECT_ATTEMPTS} attempts): "
                    f"{error_text(error)}"
                ) from None
            ray.shutdown()  # a half-open Ray Client session would make the next init a no-op
            time.sleep(CONNECT_BACKOFF_S * 2**attempt)
        except Exception as error:  # noqa: BLE001 - ValueError, RuntimeError: no retry helps
            raise ClusterError(
                f"no Ray cluster answers at {address}: {error_text(error)}"
            ) from None


class RayEngine:
    """Chunks as Ray tasks (an :class:`~graphs.chunk_runner.Engine`).

    Args:
        work: The run's work (put in the object store once).
        checkpoints: The checkpointer every task opens: Postgres, so that any node reaches it.
        address: ``ray://host:10001`` (Ray Client), ``host:6379`` or ``auto`` (a cluster this
            machine belongs to).
        max_concurrency: Records a task runs at once (threads, for LLM judges).

    Raises:
        ClusterError: Ray is not installed or no cluster answers at ``address``.
    """

    def __init__(
        self,
        work: ChunkWork[Any],
        checkpoints: str | None,
        address: str,
        max_concurrency: int = 1,
    ) -> None:
        ray = self._ray = _ray()
        self._started = not ray.is_initialized()
        if self._started:
            _connect(ray, address)
        self._workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self._task = ray.remote(num_cpus=1, max_retries=MAX_RETRIES)(run_chunk)
        self._work = ray.put(work)
        self._checkpoints = checkpoints
        self._max_concurrency = max_concurrency
        self._chunks: dict[Any, list[Any]] = {}

    @property
    def workers(self) -> int:
        """The cluster's CPUs: tasks that run at once."""
        return self._workers

    def submit(self, records: list[Any]) -> Any:
        """Start a chunk as a task; its object reference."""
        handle = self._task.remote(self._work, self._checkpoints, records, self._max_concurrency)
        self._chunks[handle] = records
        return handle

    def collect(self, handle: Any) -> ChunkResult:
        """The task's result; a task Ray gave up on is failed records with the reason."""
        records = self._chunks.pop(handle)
        try:
            result: ChunkResult = self._ray.get(handle)
        except self._ray.exceptions.RayError as error:
            why = error_text(error).strip().splitlines()[0] if str(error).strip() else repr(error)
            return lost_chunk(records, f"ClusterTaskLost: {why}; re-run to resume")
        return result

    def close(self) -> None:
        """Disconnect from the cluster (it goes on running; tasks not started are dropped)."""
        for handle in list(self._chunks):
            self._ray.cancel(handle, force=False)
        self._chunks.clear()
        if self._started:
            self._ray.shutdown()
