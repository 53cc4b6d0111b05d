"""Two ``todeval evaluate`` runs side by side: every figure with bootstrap intervals.

:func:`compare_runs` joins two runs by ``record_id``: each run's figure with a percentile
bootstrap interval, ``B - A`` with a paired one over the records both have a part for
(:mod:`evals.metrics.bootstrap`). Pure: reading, writing and drawing happen elsewhere.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from todeval.evals.metrics.bootstrap import (
    Interval,
    bootstrap_interval,
    change_verdict,
    minimum_detectable_difference,
    most_changed,
    paired_difference,
)
from todeval.evals.metrics.record_metrics import METRICS, Part

if TYPE_CHECKING:  # the reader's type only: metrics never read files
    from todeval.evals.datasets.run_folder import RunRecords

LEVEL = 0.95
PAIRING = "a record counts for a metric's difference only when both runs have its part"


def _ordered_metrics(*runs: RunRecords) -> list[str]:
    """Known metrics in report order, then any others the runs carry, by name."""
    present = {name for run in runs for parts in run.metrics.values() for name in parts}
    return [n for n in METRICS if n in present] + sorted(present - METRICS.keys())


def _run_facts(run: RunRecords) -> dict[str, Any]:
    summary = run.summary or {}
    context = (summary.get("run") or {}).get("context")
    return {
        "dir": str(run.folder),
        "records": len(run.metrics),
        "status": dict(run.status),
        "judges": summary.get("judges"),
        "context": context if isinstance(context, dict) else None,
        "summary_error": run.summary_error,
    }


def compare_runs(
    run_a: RunRecords, run_b: RunRecords, *, resamples: int, seed: int, top: int
) -> dict[str, Any]:
    """Every figure of the comparison: the payload of ``compare.json`` (and of the page)."""
    shared = [rid for rid in run_a.metrics if rid in run_b.metrics]
    metrics: dict[str, Any] = {}
    for name in _ordered_metrics(run_a, run_b):
        info = METRICS.get(name)
        pairs: dict[str, tuple[Part, Part]] = {}
        one_side = {"a": 0, "b": 0}
        for rid in shared:
            part_a, part_b = run_a.metrics[rid].get(name), run_b.metrics[rid].get(name)
            if part_a is not None and part_b is not None:
                pairs[rid] = (part_a, part_b)
            elif part_a is not None or part_b is not None:
                one_side["a" if part_a is not None else "b"] += 1
        difference = paired_difference(
            list(pairs.values()), resamples=resamples, seed=seed, level=LEVEL
        )
        detectable = minimum_detectable_difference(difference, level=LEVEL)
        metrics[name] = {
            "label": info.label if info else name,
            "suite": info.suite if info else None,
            "higher_is_better": info.higher_is_better if info else None,
            "a": asdict(_interval(run_a, name, difference.n, difference.a, resamples, seed)),
            "b": asdict(_interval(run_b, name, difference.n, difference.b, resamples, seed)),
            "difference": asdict(difference),
            "change": change_verdict(difference, info.higher_is_better if info else None),
            "minimum_detectable_difference": detectable,
            "within_noise": (
                difference.delta is not None
                and detectable is not None
                and abs(difference.delta) < detectable
            ),
            "scored_by_one_run_only": one_side,
            "floor": _floor(run_a, run_b, name),
            "most_changed": [
                {"record_id": c.record_id, "a": c.value_a, "b": c.value_b, "change": c.change}
                for c in most_changed(pairs, top)
            ],
        }
    facts = {"a": _run_facts(run_a), "b": _run_facts(run_b)}
    return {
        "runs": facts,
        "judges_differ": facts["a"]["judges"] != facts["b"]["judges"],
        "bootstrap": {"resamples": resamples, "seed": seed, "level": LEVEL, "pairing": PAIRING},
        "records": {
            "both": len(shared),
            "only_a": [rid for rid in run_a.metrics if rid not in run_b.metrics],
            "only_b": [rid for rid in run_b.metrics if rid not in run_a.metrics],
        },
        "metrics": metrics,
    }


def _floor(run_a: RunRecords, run_b: RunRecords, name: str) -> dict[str, Any] | None:
    """The figure's do-nothing floor from either run's summary (the higher when both have one)."""
    found = [
        floor
        for run in (run_a, run_b)
        if (floor := ((run.summary or {}).get("floors") or {}).get(name))
    ]
    valued = [f for f in found if f.get("value") is not None]
    if valued:
        return dict(max(valued, key=lambda f: float(f["value"])))
    return dict(found[0]) if found else None


def _interval(
    run: RunRecords, name: str, paired_n: int, paired: Interval, resamples: int, seed: int
) -> Interval:
    """The run's figure over all its records with the part.

    When those are exactly the paired records, the paired resamples already bound it (one pass
    of resampling instead of three).
    """
    parts = [p[name] for p in run.metrics.values() if name in p]
    if len(parts) == paired_n:
        return paired
    return bootstrap_interval(parts, resamples=resamples, seed=seed, level=LEVEL)
