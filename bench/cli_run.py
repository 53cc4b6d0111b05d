"""Run a ``todeval`` subcommand in a child process and measure it (shared by the benchmarks)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.internals import PROJECT_ROOT


def run_cli(arguments: list[str], *, home: Path, out: Path) -> tuple[dict[str, Any], float, float]:
    """``todeval ARGUMENTS --out OUT`` with ``TODEVAL_HOME=home``.

    Returns:
        The run's summary.json, its wall seconds (start-up included) and its peak RSS in MB.
    """
    run = measure_cli(arguments, home=home, out=out)
    return run.summary, run.wall_s, run.rss_mb


RUSAGE_FILE = "TODEVAL_BENCH_RUSAGE"
"""Environment variable: where the child writes its own peak RSS as it exits (see SHIM)."""

SHIM = """
import atexit, os, resource, runpy, sys
def _report():
    with open(os.environ["TODEVAL_BENCH_RUSAGE"], "w") as f:
        f.write(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))
atexit.register(_report)
runpy.run_module("todeval.cli.main", run_name="__main__", alter_sys=True)
"""
"""``python -m todeval.cli.main`` that reports, at exit, the peak RSS of its own process only
(``wait4`` gives the largest of the child and the descendants it waited for)."""


@dataclass(frozen=True)
class Measured:
    """One ``todeval`` child process run.

    Attributes:
        summary: Its summary.json.
        wall_s: Wall seconds, start-up included.
        rss_mb: Peak RSS in MB of the largest process of the run (the child or a process it
            waited for).
        cpu_s: CPU seconds of the child and the processes it waited for.
        parent_rss_mb: Peak RSS in MB of the child's own process (the parent of any workers).
    """

    summary: dict[str, Any]
    wall_s: float
    rss_mb: float
    cpu_s: float
    parent_rss_mb: float


def measure_cli(
    arguments: list[str],
    *,
    home: Path,
    out: Path,
    cwd: Path = PROJECT_ROOT,
    one_core: bool = False,
) -> Measured:
    """As :func:`run_cli`, from the tree ``cwd``, optionally pinned to one core."""
    command = [sys.executable, "-c", SHIM, *arguments, "--out", str(out)]
    rusage = out.with_name(out.name + ".rusage")
    rusage.parent.mkdir(parents=True, exist_ok=True)
    env = os.environ | {
        "TODEVAL_HOME": str(home),
        "ORT_DISABLE_TELEMETRY": "1",
        RUSAGE_FILE: str(rusage),
    }
    if cwd != PROJECT_ROOT:
        env["PYTHONPATH"] = str(cwd)  # that tree's modules, not this one's

    def pin() -> None:
        if one_core:
            os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})

    started = time.perf_counter()
    child = subprocess.Popen(command, env=env, cwd=cwd, preexec_fn=pin, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(command)}")
    summary = json.loads((out / "summary.json").read_text())
    return Measured(
        summary,
        elapsed,
        usage.ru_maxrss / 1024.0,
        usage.ru_utime + usage.ru_stime,
        int(rusage.read_text()) / 1024.0,
    )
