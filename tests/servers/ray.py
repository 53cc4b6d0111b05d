"""A real local Ray cluster for the tests: ``ray start --head --block`` on free ports.

:func:`running_ray` starts the head node (its GCS on a free port, Ray Client on another,
``--num-cpus`` CPUs, no dashboard, usage stats off) in its own process group with a short temp
folder (Ray's socket paths must fit in 108 bytes), waits until a driver can connect to the port
it was given and yields the address (``127.0.0.1:PORT``, what ``--cluster`` takes). ``--block``
keeps the cluster a child of the test: stopping that process group stops the cluster it started
and nothing else (``ray stop`` would stop every Ray process of the user).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.servers.process import free_port, log_tail, stop_group

RAY = Path(sys.executable).parent / "ray"
STARTUP_TIMEOUT_S = 120.0
"""Guards against a hung start only; a start takes about 10 s on two cores."""


class RayClusterError(RuntimeError):
    """The cluster did not come up (the message has its log's end)."""


@dataclass(frozen=True)
class RayCluster:
    """A running head node: where drivers and Ray Client connect, and its process."""

    address: str
    client_address: str
    process: subprocess.Popen[Any]
    folder: Path

    def worker_pids(self, task: str = "run_chunk") -> list[int]:
        """Worker processes running ``task`` now (Ray names them ``ray::<task>``)."""
        listing = subprocess.run(
            ["ps", "-eo", "pid=,args="], capture_output=True, text=True, check=True
        ).stdout
        return [
            int(line.split(None, 1)[0])
            for line in listing.splitlines()
            if line.split(None, 1)[1:] and line.split(None, 1)[1].startswith(f"ray::{task}")
        ]

    def client_server_logs(self) -> str:
        """The end of each Ray Client server's error log (why a ``ray://`` driver was refused)."""
        logs = sorted((self.folder / "t").glob("session_*/logs/ray_client_server*.err"))
        return "\n".join(f"--- {log.name}:\n{log_tail(log)}" for log in logs)


def _connects(address: str, env: dict[str, str]) -> bool:
    probe = "import ray, sys; ray.init(address=sys.argv[1]); print(ray.cluster_resources())"
    done = subprocess.run(
        [sys.executable, "-c", probe, address], env=env, capture_output=True, text=True, timeout=60
    )
    return done.returncode == 0 and "CPU" in done.stdout


@contextmanager
def running_ray(cpus: int = 2) -> Iterator[RayCluster]:
    """A one-node Ray cluster with ``cpus`` CPUs for the ``with`` block; stopped after.

    Raises:
        RayClusterError: The cluster did not come up.
    """
    folder = Path(tempfile.mkdtemp(prefix="ray-", dir="/tmp"))
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_DISABLE_DOCKER_CPU_WARNING": "1"}
    port, client_port = free_port(), free_port()
    log = folder / "head.log"
    command = [str(RAY), "start", "--head", "--block", f"--num-cpus={cpus}", f"--port={port}",
               f"--ray-client-server-port={client_port}", "--include-dashboard=false",
               "--disable-usage-stats", f"--temp-dir={folder / 't'}",
               "--node-ip-address=127.0.0.1"]  # fmt: skip
    with log.open("wb") as sink:
        process = subprocess.Popen(
            command, env=env, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True
        )
    address = f"127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while not _connects(address, env):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RayClusterError(f"ray start did not come up; its log ends:\n{log_tail(log)}")
            time.sleep(1.0)
        yield RayCluster(address, f"ray://127.0.0.1:{client_port}", process, folder)
    finally:
        stop_group(process, first=signal.SIGTERM, timeout=60)
        shutil.rmtree(folder, ignore_errors=True)
