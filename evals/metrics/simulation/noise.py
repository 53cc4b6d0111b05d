"""How far a live run's figures can be trusted: trial-to-trial spread and an interval over tasks.

tau2-bench users found two single runs of one agent must differ by 10-11 points before the gap
means anything, and a third or more of tasks flip between identical runs (tau2-bench #540, #51).
So every live figure comes with:

- a bootstrap interval over tasks (each task's mean over its trials, tasks resampled);
- with more than one trial, the figure per trial, their spread (standard deviation and range),
  and the share of tasks whose success differs between trials (``flip_rate``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from statistics import pstdev
from typing import Any

from todeval.evals.metrics.bootstrap import bootstrap_interval
from todeval.evals.metrics.goal_shift.summary import succeeded
from todeval.evals.metrics.record_metrics import Part

FIGURES = ("tsr",)


def trial_noise(
    rows: Sequence[Mapping[str, Any]], *, resamples: int = 1000, seed: int = 0
) -> dict[str, Any]:
    """Per figure: value, 95 % interval over tasks, and (trials > 1) per-trial spread; flips."""
    trials = sorted({int(row.get("trial") or 0) for row in rows})
    noise: dict[str, Any] = {"trials": len(trials), "tasks": len({r["task_id"] for r in rows})}
    for name in FIGURES:
        by_task: dict[str, list[float]] = defaultdict(list)
        by_trial: dict[int, list[float]] = defaultdict(list)
        for row in rows:
            if row.get(name) is None:
                continue
            by_task[str(row["task_id"])].append(float(row[name]))
            by_trial[int(row.get("trial") or 0)].append(float(row[name]))
        parts = [Part(num=sum(v), den=float(len(v))) for v in by_task.values()]
        interval = bootstrap_interval(parts, resamples=resamples, seed=seed)
        figure: dict[str, Any] = {
            "value": interval.value,
            "low": interval.low,
            "high": interval.high,
        }
        if len(by_trial) > 1:
            per_trial = [round(sum(v) / len(v), 4) for _, v in sorted(by_trial.items())]
            figure |= {
                "per_trial": per_trial,
                "trial_std": round(pstdev(per_trial), 4),
                "trial_range": round(max(per_trial) - min(per_trial), 4),
            }
        noise[name] = figure
    if len(trials) > 1:
        noise["flip_rate"] = _flip_rate(rows)
    return noise


def _flip_rate(rows: Sequence[Mapping[str, Any]]) -> float | None:
    """Share of tasks (with every trial decided) whose success is not the same in all trials."""
    outcomes: dict[str, set[bool]] = defaultdict(set)
    for row in rows:
        outcome = succeeded(row)
        if outcome is not None:
            outcomes[str(row["task_id"])].add(outcome)
    if not outcomes:
        return None
    return round(sum(len(o) > 1 for o in outcomes.values()) / len(outcomes), 4)
