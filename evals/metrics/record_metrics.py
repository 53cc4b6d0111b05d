"""Each record's share of the corpus figures, so runs can be resampled and compared per record.

A corpus figure is ``sum(num) / sum(den)`` over the records with a part for it: pooled figures
give each record its counts, figures averaged over records its value over 1. So
:func:`corpus_value` equals the summary's figure, and a bootstrap over records
(``todeval compare``) resamples exactly what the summary pooled. Parts are read from the
per-suite lines of ``results.jsonl`` (:mod:`evals.metrics.evaluation`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from typing_extensions import TypedDict

from todeval.evals.metrics.goal_shift.tool_redundancy import tool_call_redundancy
from todeval.evals.metrics.goal_shift.tool_use import serves_task, tool_usage_efficiency


class Part(TypedDict):
    """One record's numerator and denominator of a corpus figure."""

    num: float
    den: float


@dataclass(frozen=True)
class MetricInfo:
    """What a figure is: its suite, a readable name, and which direction is better."""

    suite: str
    label: str
    higher_is_better: bool = True


#: Every figure a record can contribute to, in report order.
METRICS: dict[str, MetricInfo] = {
    "gsr": MetricInfo("goal_success", "Goal Success Rate"),
    "goal_detection_f1": MetricInfo("goal_tracking", "goal detection F1"),
    "status_accuracy": MetricInfo("goal_tracking", "goal status accuracy"),
    "dgcr": MetricInfo("goal_tracking", "dGCR"),
    "memory_recall_accuracy": MetricInfo("goal_tracking", "memory recall accuracy"),
    "tsr": MetricInfo("goal_shift", "TSR"),
    "tool_correctness": MetricInfo("goal_shift", "tool correctness (T)"),
    "param_validity": MetricInfo("goal_shift", "parameter validity (P)"),
    "tcrr": MetricInfo("goal_shift", "TCRR", higher_is_better=False),
    "shift_recovery_rate": MetricInfo("goal_shift", "goal-shift recovery rate"),
    "recall_at_5": MetricInfo("memory", "memory Recall@5"),
    "slot_accuracy": MetricInfo("memory", "slot accuracy"),
    "jga": MetricInfo("memory", "JGA"),
    "dte": MetricInfo("memory", "DTE", higher_is_better=False),
    "repair_success_rate": MetricInfo("memory", "repair success rate (S.R.)"),
    "proactive_plan_score": MetricInfo("proactive", "target-planning score (1-10)"),
    "proactive_guidance_score": MetricInfo("proactive", "dialogue-guidance score (1-10)"),
}

#: The ProactiveEval figures: each task's verdict in the suite's line, and its score field.
PROACTIVE_SCORES: dict[str, tuple[str, str, str]] = {
    "proactive_plan_score": ("plan", "plan_verdict", "score"),
    "proactive_guidance_score": ("guidance", "guidance_verdict", "overall"),
}


def _part(num: float, den: float) -> Part | None:
    return {"num": float(num), "den": float(den)} if den else None


def _mean_part(value: Any) -> Part | None:
    """A per-record value averaged over records: ``value / 1`` (None when not computed)."""
    return None if value is None else _part(float(value), 1.0)


def gsr_parts(goal_lines: Sequence[Mapping[str, Any]]) -> dict[str, Part | None]:
    """GSR: goals that succeeded over decided goals (undecided goals are left out)."""
    decided = [goal["success"] for goal in goal_lines if goal.get("success") is not None]
    return {"gsr": _part(sum(bool(s) for s in decided), len(decided))}


def goal_tracking_parts(row: Mapping[str, Any]) -> dict[str, Part | None]:
    """Detection F1 (``2tp / (pred + gold)``), status accuracy, dGCR and memory recall counts."""
    counts: Mapping[str, int] = row.get("counts") or {}
    parts: dict[str, Part | None] = {
        "dgcr": _part(counts.get("completed", 0), counts.get("decided", 0))
    }
    if "tp" in counts:  # the record has gold goals
        tp = counts["tp"]
        parts["goal_detection_f1"] = _part(2 * tp, counts["n_pred"] + counts["n_gold"])
        parts["status_accuracy"] = _part(counts["status_correct"], tp)
        parts["memory_recall_accuracy"] = _part(counts["recall_correct"], counts["recall_judged"])
    return parts


def goal_shift_parts(row: Mapping[str, Any]) -> dict[str, Part | None]:
    """TSR (mean over conversations), T, P and TCRR (pooled over calls), shifts recovered."""
    calls = row.get("tool_calls") or []
    usage = tool_usage_efficiency(calls if serves_task(calls) else [])  # TUE n/a: no part
    redundancy = tool_call_redundancy(calls)
    shifts = row.get("shifts") or []
    return {
        "tsr": _mean_part(row.get("tsr")),
        "tool_correctness": _part(usage.correct, usage.judged_calls),
        "param_validity": _part(usage.valid, usage.calls),
        "tcrr": _part(redundancy.redundant, redundancy.calls),
        "shift_recovery_rate": _part(sum(bool(s["recovered"]) for s in shifts), len(shifts)),
    }


def memory_parts(line: Mapping[str, Any]) -> dict[str, Part | None]:
    """Recall@5, slot accuracy, JGA (item means), DTE and repair success (over repair loops)."""
    scores: Mapping[str, Any] = line.get("scores") or {}
    success = line.get("repair_success")
    return {
        "recall_at_5": _mean_part(scores.get("recall_at_5")),
        "slot_accuracy": _mean_part(scores.get("slot_accuracy")),
        "jga": _mean_part(scores.get("jga")),
        "dte": _mean_part(line.get("dte")),
        "repair_success_rate": None if success is None else _part(bool(success), 1),
    }


def proactive_verdict(line: Mapping[str, Any], figure: str) -> Mapping[str, Any] | None:
    """The verdict behind one ProactiveEval figure in the suite's line (None: task not scored)."""
    task, key, _ = PROACTIVE_SCORES[figure]
    scored: Mapping[str, Any] | None = line.get(task)
    return None if scored is None else scored.get(key)


def proactive_parts(line: Mapping[str, Any]) -> dict[str, Part | None]:
    """Each task's 1-10 score over 1 (a mean over records); none where the judge abstained."""
    parts: dict[str, Part | None] = {}
    for figure, (_, _, score) in PROACTIVE_SCORES.items():
        verdict = proactive_verdict(line, figure)
        parts[figure] = None if verdict is None else _mean_part(verdict.get(score))
    return parts


#: How each suite's line in ``results.jsonl`` becomes parts.
SUITE_PARTS: dict[str, Callable[[Any], dict[str, Part | None]]] = {
    "goal_success": lambda line: gsr_parts(line["goals"]),
    "goal_tracking": lambda line: goal_tracking_parts(line["figures"]),
    "goal_shift": goal_shift_parts,
    "memory": memory_parts,
    "proactive": proactive_parts,
}


def record_parts(results: Mapping[str, Any]) -> dict[str, Part]:
    """A record's parts over every suite it ran (``results`` keyed by suite); defined only."""
    parts: dict[str, Part] = {}
    for suite, line in results.items():
        if suite in SUITE_PARTS and line is not None:
            parts |= {k: v for k, v in SUITE_PARTS[suite](line).items() if v is not None}
    return parts


def corpus_value(parts: Iterable[Part]) -> float | None:
    """``sum(num) / sum(den)``; None when no record has a part."""
    num = den = 0.0
    for part in parts:
        num += part["num"]
        den += part["den"]
    return num / den if den else None


def corpus_values(records: Iterable[Mapping[str, Part]]) -> dict[str, float | None]:
    """Every metric's corpus value over records' parts (``results.jsonl`` ``metrics`` fields)."""
    pooled = CorpusParts()
    for parts in records:
        pooled.add(parts)
    return pooled.values()


@dataclass
class CorpusParts:
    """:func:`corpus_values` one record at a time: each metric's ``num`` and ``den`` summed."""

    sums: dict[str, list[float]] = field(default_factory=dict)

    def add(self, parts: Mapping[str, Part]) -> None:
        """Add one record's parts."""
        for name, part in parts.items():
            sums = self.sums.setdefault(name, [0.0, 0.0])
            sums[0] += part["num"]
            sums[1] += part["den"]

    def merge(self, other: CorpusParts) -> None:
        """Add the records ``other`` summed."""
        for name, (num, den) in other.sums.items():
            self.add({name: {"num": num, "den": den}})

    def values(self) -> dict[str, float | None]:
        """Every metric's ``sum(num) / sum(den)``, in report order; None over a zero ``den``."""
        pooled = self.sums
        return {
            name: (pooled[name][0] / pooled[name][1] if pooled[name][1] else None)
            for name in METRICS
            if name in pooled
        }
