"""``todeval evaluate --cluster``: record chunks as tasks on a real local Ray cluster.

The cluster (2 CPUs, ``ray start --head``) and a PostgreSQL (Debian's, as the postgres user)
run for real; a Ray worker running a chunk is killed mid-run. The run still finishes every
record, and its results and figures are those of a run in one process; a rerun on the cluster
reads every record back from Postgres (any worker resumes any thread).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.integration.conftest import (
    VENV_BIN,
    judged,
    run_todeval,
    subprocess_env,
    write_corpus,
)
from tests.servers.ray import RayCluster, running_ray
from todeval.graphs.runner import BATCH_GC_THRESHOLD

pytestmark = pytest.mark.integration

RUN_TIMEOUT_S = 900.0
"""Guards against a hang only."""


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[RayCluster]:
    with running_ray(cpus=2) as cluster:
        yield cluster


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line]


def test_cluster_run_survives_a_killed_worker_and_matches_one_process(
    tmp_path: Path, ray_cluster: RayCluster, postgres_url: str, spawn: Any
) -> None:
    corpus = tmp_path / "corpus.jsonl"
    ids = write_corpus(corpus, 80)
    home = tmp_path / "home"
    local = run_todeval(
        ["evaluate", str(corpus), "--out", str(tmp_path / "local"), "--checkpoints", ":memory:"],
        home,
    )
    assert local.returncode == 0, local.stderr[-3000:]

    command = [str(VENV_BIN / "todeval"), "evaluate", str(corpus), "--out",
               str(tmp_path / "cluster"), "--checkpoints", postgres_url,
               "--cluster", ray_cluster.address]  # fmt: skip
    env = subprocess_env(home, RAY_USAGE_STATS_ENABLED="0")
    with (tmp_path / "cluster.log").open("w") as log:
        run = spawn(command, cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT)
    killed = None
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while killed is None and run.poll() is None and time.monotonic() < deadline:
        running = ray_cluster.worker_pids()
        if running:
            time.sleep(1.0)  # let it finish a few records, so some are read back
            killed = running[0]
            os.kill(killed, signal.SIGKILL)
        time.sleep(0.2)
    run.wait(timeout=RUN_TIMEOUT_S)
    output = (tmp_path / "cluster.log").read_text()
    assert run.returncode == 0, output[-3000:]
    assert killed is not None, "the run finished before a worker could be killed"

    on_cluster = _lines(tmp_path / "cluster" / "results.jsonl")
    in_process = _lines(tmp_path / "local" / "results.jsonl")
    assert [line["record_id"] for line in on_cluster] == ids  # input order, each once
    assert all(line["status"] == "done" for line in on_cluster)
    assert [judged(line) for line in on_cluster] == [judged(line) for line in in_process]
    summary = json.loads((tmp_path / "cluster" / "summary.json").read_text())
    local_summary = json.loads((tmp_path / "local" / "summary.json").read_text())
    assert summary["metrics"] == local_summary["metrics"]
    assert summary["run"]["placement"] == {"engine": "ray", "address": ray_cluster.address}
    password = urlsplit(postgres_url).password
    assert password and password not in json.dumps(summary)  # the summary keeps no password

    again = run_todeval(
        ["evaluate", str(corpus), "--out", str(tmp_path / "again"), "--checkpoints",
         postgres_url, "--cluster", ray_cluster.client_address],
        home,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr[-3000:] + ray_cluster.client_server_logs()
    reread = _lines(tmp_path / "again" / "results.jsonl")
    assert all(line["resumed"] for line in reread)
    assert [judged(line) for line in reread] == [judged(line) for line in in_process]


def test_cluster_without_shared_checkpoints_is_a_usage_error(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    write_corpus(corpus, 2)
    done = run_todeval(
        ["evaluate", str(corpus), "--out", str(tmp_path / "out"), "--cluster", "auto"],
        tmp_path / "home",
    )
    assert done.returncode == 2
    assert "--cluster needs --checkpoints postgresql://" in done.stderr


def test_a_cluster_worker_keeps_the_batch_collection_thresholds(
    tmp_path: Path, ray_cluster: RayCluster
) -> None:
    # The driver connects as a run does (the job's runtime_env); a task reads its worker's.
    code = (
        "import gc\n"
        "from todeval.graphs.ray_runner import _connect, _ray\n"
        "ray = _ray()\n"
        f"_connect(ray, {ray_cluster.address!r})\n"
        "@ray.remote(num_cpus=1)\n"
        "def thresholds():\n"
        "    return gc.get_threshold()\n"
        "print('THRESHOLDS', list(ray.get(thresholds.remote())))\n"
        "ray.shutdown()\n"
    )
    env = subprocess_env(tmp_path / "home", RAY_USAGE_STATS_ENABLED="0")
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("THRESHOLDS "))
    assert json.loads(line.removeprefix("THRESHOLDS ")) == list(BATCH_GC_THRESHOLD)
    assert list(BATCH_GC_THRESHOLD) != [700, 10, 10]  # Python's defaults, what it had before
