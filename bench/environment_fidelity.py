"""Benchmark: every registered domain's tool fidelity on its recorded runs, and its trial costs.

For each domain of :data:`~nodes.simulation.domains.DOMAINS`:

- **fidelity**, for each of its recorded runs: every recorded tool call is replayed, in order,
  through a fresh environment of its task, and each result is compared with the recorded one
  (JSON parsed, compared structurally, plus the error flag); every difference is printed with
  its documented reason (the domain's ``explain``, e.g.
  :mod:`~nodes.simulation.domains.banking.fidelity`) or ``UNEXPLAINED``;
- **trial costs**: the first trial of the process (it loads the database), a new trial, a deep
  copy of the database (what an overlaying trial avoids), a first write, the snapshot, a reset,
  the gold database of every task with gold actions, and determinism (the same log twice gives
  the same snapshot).

Figures only, not a test (``tests/unit/test_environment_fidelity.py`` holds the floors).
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

from bench.internals import (
    DOMAINS,
    Domain,
    FidelityReport,
    RecordedRun,
    ToolCall,
    gold_actions,
    gold_snapshot,
    replay_recorded_run,
)


@lru_cache(maxsize=4)
def load_run(path: str) -> dict[str, Any]:
    """A recorded run (tasks and simulations), read once per process."""
    run: dict[str, Any] = json.loads(Path(path).read_text(encoding="utf-8"))
    return run


def fidelity(domain: Domain, recorded: RecordedRun) -> FidelityReport:
    """Replay ``recorded`` through the domain's environment (or the run's own, if it has one)."""
    run = load_run(str(recorded.file()))
    tasks = {str(t["id"]): t for t in run["tasks"]}
    return replay_recorded_run(
        run["simulations"], tasks, recorded.environment or domain.environment
    )


def print_fidelity(domain: Domain, recorded: RecordedRun, report: FidelityReport) -> None:
    """The share, then every difference with its reason."""
    print(f"\n== {domain.name} fidelity, {recorded.file().name}, database {recorded.label}")
    print(f"  {report.identical}/{report.calls} results identical ({report.share:.1%})")
    for diff in report.differences:
        reason = recorded.explain(diff) or "UNEXPLAINED"
        print(f"  - {diff.task_id} {diff.call_id} {diff.name}({json.dumps(diff.arguments)})")
        print(f"      recorded: {diff.recorded[:110]}")
        print(f"      todeval:  {diff.produced[:110]}")
        print(f"      reason:   {reason}")


def timed(action: Callable[[], Any], repeat: int = 200) -> float:
    """Mean seconds per call of ``action``."""
    started = time.perf_counter()
    for _ in range(repeat):
        action()
    return (time.perf_counter() - started) / repeat


def trial_figures(domain: Domain) -> None:
    """What a trial of ``domain`` costs, its gold databases, determinism."""
    print(f"\n== {domain.name} trial cost")
    loading = timed(domain.environment, 1)
    print(f"  first trial (loads the database unless loaded already): {loading * 1e3:.0f} ms")
    env = domain.environment()
    print(
        f"  deep copy of the database: {timed(lambda: copy.deepcopy(env.snapshot()), 3) * 1e3:.0f}"
        " ms"
    )
    print(f"  new trial: {timed(domain.environment) * 1e6:.1f} us")
    tasks = json.loads(domain.tasks_path().read_text(encoding="utf-8"))
    with_gold = [t for t in tasks if gold_actions(t)]
    write = _first_write(domain, [c for t in with_gold for c in gold_actions(t)])
    if write is not None:

        def first_write() -> None:
            env.reset()
            env.call(write)

        print(f"  first write ({write.name}): {timed(first_write) * 1e6:.1f} us")
    print(f"  snapshot: {timed(env.snapshot) * 1e6:.0f} us; reset: {timed(env.reset) * 1e6:.1f} us")
    if not with_gold:
        print(f"  no task of {len(tasks)} has gold actions")
        return
    started = time.perf_counter()
    for task in with_gold:
        gold_snapshot(domain.name, task)
    per = (time.perf_counter() - started) / len(with_gold)
    print(f"  gold database of {len(with_gold)}/{len(tasks)} tasks: {per * 1e3:.2f} ms per task")
    log = [c for t in with_gold for c in gold_actions(t)]
    first, second = domain.environment(), domain.environment()
    first.replay(log)
    second.replay(log)
    same = json.dumps(first.snapshot(), sort_keys=True) == json.dumps(
        second.snapshot(), sort_keys=True
    )
    print(f"  determinism: {len(log)} gold calls replayed twice -> identical snapshot: {same}")


def _first_write(domain: Domain, calls: list[ToolCall]) -> ToolCall | None:
    """The first of ``calls`` that changes a fresh database on its own (None: none does)."""
    fresh = json.dumps(domain.environment().snapshot(), sort_keys=True)
    for call in calls:
        env = domain.environment()
        env.call(call)
        if json.dumps(env.snapshot(), sort_keys=True) != fresh:
            return call
    return None


def main() -> None:
    """Fidelity on every recorded run, then the trial figures, domain by domain."""
    for domain in DOMAINS.values():
        for recorded in domain.recorded_runs:
            if not recorded.file().exists():
                print(f"{recorded.file()} not found: set TODEVAL_DATA_DIR")
                continue
            print_fidelity(domain, recorded, fidelity(domain, recorded))
        if not domain.tasks_path().exists():
            print(f"{domain.tasks_path()} not found: set TODEVAL_DATA_DIR")
            continue
        trial_figures(domain)


if __name__ == "__main__":
    main()
