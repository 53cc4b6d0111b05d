"""The figures a release gate reads from a finished run (``--fail-under``)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from todeval.evals.datasets.run_folder import read_run
from todeval.evals.metrics.bootstrap import bootstrap_interval
from todeval.evals.metrics.gate import Figure, Threshold, gate_failures
from todeval.graphs.corpus.evaluation import evaluate_corpus
from todeval.nodes.context import Context


def evaluation_figures(out: Path, *, resamples: int = 1000, seed: int = 0) -> dict[str, Figure]:
    """Every corpus figure of an evaluate run, with its bootstrap interval over records."""
    run = read_run(out)
    names = {name for parts in run.metrics.values() for name in parts}
    floors = (run.summary or {}).get("floors") or {}
    figures = {}
    for name in sorted(names):
        parts = [p[name] for p in run.metrics.values() if name in p]
        interval = bootstrap_interval(parts, resamples=resamples, seed=seed)
        floor = (floors.get(name) or {}).get("value")
        figures[name] = Figure(interval.value, interval.low, interval.high, floor)
    return figures


def simulation_figures(summary: Mapping[str, Any]) -> dict[str, Figure]:
    """A simulate run's figures: TSR with its interval over tasks, the others as they are."""
    floors = {
        name: (summary.get("floors") or {}).get(key, {}).get("value")
        for name, key in (("tsr", "tsr"), ("tue", "tue"), ("pass^1", "pass_hat_k"))
    }
    figures = {
        name: Figure(float(value), floor=floors.get(name))
        for name, value in summary.items()
        if name in ("tue", "tool_correctness", "param_validity", "tcrr") and value is not None
    }
    for k, value in (summary.get("pass_hat_k") or {}).items():
        figures[f"pass^{k}"] = Figure(float(value), floor=floors.get(f"pass^{k}"))
    tsr = ((summary.get("simulation") or {}).get("noise") or {}).get("tsr") or {}
    figures["tsr"] = Figure(summary.get("tsr"), tsr.get("low"), tsr.get("high"), floors["tsr"])
    return figures


def difference_figures(comparison: Mapping[str, Any]) -> dict[str, Figure]:
    """A comparison's figures: each metric's difference B - A with its paired interval."""
    return {
        name: Figure(d["delta"], d["low"], d["high"])
        for name, row in comparison["metrics"].items()
        for d in [row["difference"]]
    }


def assert_figures(
    inputs: Sequence[Path | str],
    fail_under: Mapping[str, Threshold],
    *,
    out: Path | str,
    allow_na: bool = False,
    context: Context | None = None,
    limit: int | None = None,
) -> dict[str, Any]:
    """Evaluate ``inputs`` as ``todeval evaluate`` does and assert every threshold holds.

    For a team's own test suite (pytest, say): the checkpoints stay in memory, the outputs go to
    ``out`` (``tmp_path``). Returns the summary.

    Raises:
        AssertionError: A figure is under its threshold or n/a (the message lists each, with
            its interval).
    """
    evaluate_corpus(inputs, context, out=Path(out), checkpoints=":memory:", limit=limit)
    failures = gate_failures(evaluation_figures(Path(out)), fail_under, allow_na=allow_na)
    if failures:
        raise AssertionError("; ".join(failures))
    summary: dict[str, Any] = json.loads((Path(out) / "summary.json").read_text())
    return summary
