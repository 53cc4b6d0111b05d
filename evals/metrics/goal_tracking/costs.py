"""Computational cost of goal tracking (ATOD, paper 000, Sections 7 and 8.2, Fig. 4).

Per-turn update latency, LLM calls and token usage from a tracker's ``costs`` records:
:func:`cost_report` over a list of them, :class:`CostCounts` one record at a time, for a corpus
run that keeps sums and a latency sketch instead of every utterance's record.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from todeval.evals.metrics.goal_tracking.goal_records import GoalRecord, round4
from todeval.evals.metrics.quantile_sketch import LogHistogram
from todeval.evals.metrics.running import RunningMean

MEANS = ("llm_calls", "prompt_tokens", "completion_tokens")
"""The record fields whose per-turn means the report gives (``<field>_per_turn``)."""


def cost_report(records: Sequence[GoalRecord]) -> dict[str, Any]:
    """Per-turn cost of tracking (Section 8.2, Fig. 4): latency, LLM calls and tokens.

    Each figure is over the records that have its field. Percentiles interpolate linearly
    between closest ranks (NumPy's default). ``prompt_tokens_by_turn`` maps an utterance
    index to the mean prompt tokens there, so turn 10 and turn 50 can be compared.
    """
    counts = CostCounts()
    counts.extend(records)
    return with_exact_latencies(counts.report(), _values(records, "latency_ms"))


def with_exact_latencies(report: dict[str, Any], latencies: Iterable[float]) -> dict[str, Any]:
    """A :class:`CostCounts` report with the exact latency percentiles (the values at hand)."""
    ordered = sorted(latencies)
    report = {k: v for k, v in report.items() if k != "latency_ms_relative_error"}
    return report | {
        "latency_ms_p50": round4(percentile(ordered, 50)),
        "latency_ms_p95": round4(percentile(ordered, 95)),
    }


@dataclass
class CostCounts:
    """:func:`cost_report` one record at a time: counts, sums and a latency sketch.

    Means are exact (sums in arrival order); the latency percentiles come from a
    :class:`~evals.metrics.quantile_sketch.LogHistogram`, within its relative error, which the
    report gives as ``latency_ms_relative_error``.
    """

    n_turns: int = 0
    latency: LogHistogram = field(default_factory=LogHistogram)
    latency_mean: RunningMean = field(default_factory=RunningMean)
    means: dict[str, RunningMean] = field(
        default_factory=lambda: {name: RunningMean() for name in MEANS}
    )
    prompt_tokens_by_turn: dict[int, RunningMean] = field(default_factory=dict)

    def add(self, record: GoalRecord) -> None:
        """Count one utterance's cost record."""
        self.extend((record,))

    def extend(self, records: Iterable[GoalRecord]) -> None:
        """Count each record (a dialogue has one per utterance).

        Each sum takes its values in record order, as one :meth:`add` at a time would; read
        first and then summed, each in one call. A record that cannot be read raises (and the
        dialogue is counted in part).
        """
        latencies: list[float] = []
        values: dict[str, list[float]] = {name: [] for name in self.means}
        by_turn = self.prompt_tokens_by_turn
        n_turns = 0
        for record in records:
            n_turns += 1
            get = record.get
            if (value := get("latency_ms")) is not None:
                latencies.append(float(value))
            for name, read in values.items():
                if (value := get(name)) is not None:
                    read.append(float(value))
            if (tokens := get("prompt_tokens")) is not None:
                turn = int(record["turn"])
                at_turn = by_turn.get(turn)
                if at_turn is None:  # not a new RunningMean every time
                    at_turn = by_turn[turn] = RunningMean()
                at_turn.add(float(tokens))
        self.n_turns += n_turns
        self.latency.extend(latencies)
        self.latency_mean.extend(latencies)
        for name, read in values.items():
            self.means[name].extend(read)

    def merge(self, other: CostCounts) -> None:
        """Add the records ``other`` counted."""
        self.n_turns += other.n_turns
        self.latency.merge(other.latency)
        self.latency_mean.merge(other.latency_mean)
        for name, mean in other.means.items():
            self.means[name].merge(mean)
        for turn, mean in other.prompt_tokens_by_turn.items():
            self.prompt_tokens_by_turn.setdefault(turn, RunningMean()).merge(mean)

    def report(self) -> dict[str, Any]:
        """:func:`cost_report`'s figures, the percentiles read off the sketch."""
        by_turn = self.prompt_tokens_by_turn
        return {
            "n_turns": self.n_turns,
            "latency_ms_p50": round4(self.latency.quantile(50)),
            "latency_ms_p95": round4(self.latency.quantile(95)),
            "latency_ms_relative_error": self.latency.relative_error,
            "latency_ms_mean": round4(self.latency_mean.value()),
            **{f"{name}_per_turn": round4(mean.value()) for name, mean in self.means.items()},
            "prompt_tokens_by_turn": {t: round4(by_turn[t].value()) for t in sorted(by_turn)},
        }


def _values(records: Sequence[GoalRecord], name: str) -> list[float]:
    return [float(record[name]) for record in records if record.get(name) is not None]


def percentile(ordered: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile (0-100) of sorted values, type 7; None over nothing."""
    if not ordered:
        return None
    position = (len(ordered) - 1) * q / 100
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)
