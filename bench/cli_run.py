"""Run a ``todeval`` subcommand in a child process and measure it (shared by the benchmarks)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.internals import PROJECT_ROOT


def run_cli(arguments: list[str], *, home: Path, out: Path) -> tuple[dict[str, Any], float, float]:
    """``todeval ARGUMENTS --out OUT`` with ``TODEVAL_HOME=home``.

    Returns:
        The run's summary.json, its wall seconds (start-up included) and its peak RSS in MB.
    """
    summary, wall, rss, _ = measure_cli(arguments, home=home, out=out)
    return summary, wall, rss


def measure_cli(
    arguments: list[str],
    *,
    home: Path,
    out: Path,
    cwd: Path = PROJECT_ROOT,
    one_core: bool = False,
) -> tuple[dict[str, Any], float, float, float]:
    """As :func:`run_cli`, from the tree ``cwd``, optionally pinned to one core.

    Returns:
        The summary, wall seconds, peak RSS in MB (the largest process of the run: the child or
        a worker it waited for) and CPU seconds of the child and the workers it waited for.
    """
    command = [sys.executable, "-m", "todeval.cli.main", *arguments, "--out", str(out)]
    env = os.environ | {"TODEVAL_HOME": str(home), "ORT_DISABLE_TELEMETRY": "1"}
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
    return summary, elapsed, usage.ru_maxrss / 1024.0, usage.ru_utime + usage.ru_stime
