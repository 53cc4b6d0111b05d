"""The two tasks' tallies: result lines, and mean and std over the runs by group.

As the paper: each figure is averaged over a group's environments in every run, then reported
as mean and std of those run means, for the corpus, each domain, tier and (guidance)
agreeableness. std is None with fewer than two run means (no spread is not zero spread).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from statistics import fmean, stdev
from typing import Any, Literal

from todeval.evals.proactive_schema import ProactiveRun
from todeval.evals.results import ThreadResult, usable_result
from todeval.evals.schema import RecordError

Task = Literal["plan", "guide"]
Figure = Callable[[Mapping[str, Any]], float | None]


def _get(row: Mapping[str, Any], *path: str) -> Any:
    value: Any = row
    for key in path:
        value = value.get(key) if isinstance(value, Mapping) else None
    return value


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


#: Each task's figures, read from one result line.
FIGURES: dict[Task, dict[str, Figure]] = {
    "plan": {"score": lambda r: _number(_get(r, "plan_verdict", "score"))},
    "guide": {
        "score": lambda r: _number(_get(r, "guidance_verdict", "overall")),
        "turns": lambda r: _number(r.get("turns")),
        "reached": lambda r: None if r.get("reached") is None else float(bool(r["reached"])),
        "target_density": lambda r: _number(_get(r, "density", "target_density")),
        "initiation_density": lambda r: _number(_get(r, "density", "initiation_density")),
    },
}

#: The groupings of the summary, per task.
GROUPS: dict[Task, tuple[str, ...]] = {
    "plan": ("domain", "tier"),
    "guide": ("domain", "tier", "agreeableness"),
}


def over_runs(rows: Sequence[Mapping[str, Any]], figure: Figure) -> dict[str, Any]:
    """Mean and std over the runs of the per-run mean of ``figure`` (see the module doc)."""
    by_run: dict[int, list[float]] = defaultdict(list)
    for row in rows:
        value = figure(row)
        if value is not None:
            by_run[int(row["run"])].append(value)
    means = [fmean(values) for _, values in sorted(by_run.items())]
    return {
        "mean": round(fmean(means), 4) if means else None,
        "std": round(stdev(means), 4) if len(means) > 1 else None,
        "runs": len(means),
        "scored": sum(len(v) for v in by_run.values()),
        "unscored": len(rows) - sum(len(v) for v in by_run.values()),
    }


def figures_of(task: Task, rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Every figure of the task over these rows."""
    return {name: over_runs(rows, figure) for name, figure in FIGURES[task].items()}


class TaskTally:
    """The lines and figures of a target-planning or dialogue-guidance run."""

    def __init__(self, task: Task) -> None:
        self.task: Task = task
        self.rows: list[dict[str, Any]] = []
        self.skipped: list[dict[str, Any]] = []
        self.failed: list[dict[str, Any]] = []

    def add(
        self, record: ProactiveRun | RecordError, result: ThreadResult | None
    ) -> list[dict[str, Any]]:
        """One run's line (none for a failed thread, which is counted)."""
        usable = usable_result(
            record, result, skipped=self.skipped, failed=self.failed, id_key="eval_id"
        )
        if usable is None:
            return []
        run, thread, output = usable
        row: dict[str, Any] = run.model_dump(
            include={"eval_id", "environment_id", "domain", "tier", "agent", "run"}
        )
        if run.agreeableness is not None:
            row["agreeableness"] = run.agreeableness
        row |= {"thread_id": thread.thread_id, "resumed": thread.resumed} | output
        row["eval_id"] = run.eval_id
        self.rows.append(row)
        return [row]

    def summary(self, elapsed_s: float) -> dict[str, Any]:
        """Figures overall and by group, and the counts."""
        by: dict[str, dict[str, Any]] = {}
        for key in GROUPS[self.task]:
            groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
            for row in self.rows:
                groups[str(row.get(key))].append(row)
            by[key] = {name: figures_of(self.task, rows) for name, rows in sorted(groups.items())}
        environments = {row["environment_id"] for row in self.rows}
        return {
            "figures": figures_of(self.task, self.rows),
            "by": by,
            "counts": {
                "runs": len(self.rows),
                "environments": len(environments),
                "skipped": len(self.skipped),
                "failed": len(self.failed),
            },
            "skipped": self.skipped,
            "failed": self.failed,
            "seconds_per_run": round(elapsed_s / len(self.rows), 4) if self.rows else None,
        }
