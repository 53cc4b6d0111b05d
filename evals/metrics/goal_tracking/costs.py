"""Computational cost of goal tracking (ATOD, paper 000, Sections 7 and 8.2, Fig. 4).

Per-turn update latency, LLM calls and token usage from a tracker's ``costs`` records.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from evals.metrics.goal_tracking.goal_records import GoalRecord, mean_or_none, round4


def cost_report(records: Sequence[GoalRecord]) -> dict[str, Any]:
    """Per-turn cost of tracking (Section 8.2, Fig. 4): latency, LLM calls and tokens.

    Each figure is over the records that have its field (``None`` or missing is skipped).
    Percentiles interpolate linearly between closest ranks (NumPy's default, Hyndman-Fan type
    7): the p50 of 100, 200, 300, 400 ms is 250.

    Returns:
        ``n_turns``; ``latency_ms_p50``, ``latency_ms_p95``, ``latency_ms_mean``;
        ``llm_calls_per_turn``, ``prompt_tokens_per_turn``, ``completion_tokens_per_turn``
        (means); ``prompt_tokens_by_turn``: utterance index -> mean prompt tokens of the
        records at that index, so turn 10 and turn 50 can be compared. Rounded; ``None`` over
        nothing.
    """
    by_turn: dict[int, list[float]] = defaultdict(list)
    for record in records:
        if record.get("prompt_tokens") is not None:
            by_turn[int(record["turn"])].append(float(record["prompt_tokens"]))
    latencies = sorted(_values(records, "latency_ms"))
    return {
        "n_turns": len(records),
        "latency_ms_p50": round4(_percentile(latencies, 50)),
        "latency_ms_p95": round4(_percentile(latencies, 95)),
        "latency_ms_mean": round4(mean_or_none(latencies)),
        "llm_calls_per_turn": round4(mean_or_none(_values(records, "llm_calls"))),
        "prompt_tokens_per_turn": round4(mean_or_none(_values(records, "prompt_tokens"))),
        "completion_tokens_per_turn": round4(mean_or_none(_values(records, "completion_tokens"))),
        "prompt_tokens_by_turn": {t: round4(mean_or_none(by_turn[t])) for t in sorted(by_turn)},
    }


def _values(records: Sequence[GoalRecord], name: str) -> list[float]:
    return [float(record[name]) for record in records if record.get(name) is not None]


def _percentile(ordered: Sequence[float], q: float) -> float | None:
    if not ordered:
        return None
    position = (len(ordered) - 1) * q / 100
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)
