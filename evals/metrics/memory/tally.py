"""Memory metrics over a run, as items stream in (MAP / MS-TOD, paper 001, §5.1).

Each item's ``items.jsonl`` line holds what the memory-active graph did with it and its scores
(:func:`~evals.metrics.memory.scores.item_scores`); :class:`MemoryTally` keeps the lines and the
per-item latencies and pools them into the summary (:func:`memory_summary`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from evals.memory_schema import MemoryEvalRecord, MemoryUnit
from evals.metrics.memory.scores import item_scores, memory_summary
from evals.results import MemoryItemLine, ThreadResult
from evals.schema import RecordError

Units = Callable[[str], Sequence[MemoryUnit]]
"""An individual's stored units (the memory bank's ``units``)."""


def item_line(
    record: MemoryEvalRecord, result: ThreadResult, units: Sequence[MemoryUnit]
) -> dict[str, Any]:
    """One line of items.jsonl: what the graph did with the item and its scores."""
    output = result.output or {}
    item = record.item
    relevant = set(item.relevant_session_ids)
    repair = output.get("repair") or {}
    line = {
        "eval_id": item.eval_id,
        "individual_id": record.individual_id,
        "intent": item.intent,
        "retrieved_unit_ids": [row["unit"]["unit_id"] for row in output.get("activated", [])],
        "relevant_session_ids": item.relevant_session_ids,
        "relevant_units": sum(1 for unit in units if unit.session_id in relevant),
        "selected": output.get("selected", []),
        "missing_slots": output.get("missing_slots"),
        "task_goal": dict(item.task_goal),
        "response": output.get("response"),
        "reference_response": item.reference_response,
        "dte": repair.get("dte"),
        "repair_success": repair.get("success"),
        "repair": repair or None,
        "judges": output.get("judges", {}),
        "reasons": output.get("reasons", []),
        "thread_id": result.thread_id,
    }
    return MemoryItemLine.model_validate(line | {"scores": item_scores(line)}).row()


class MemoryTally:
    """The item lines of a memory run and the time between finished items.

    Args:
        units: An individual's stored units, for the relevant-unit counts of Recall@k.
    """

    def __init__(self, units: Units) -> None:
        self.units = units
        self.lines: list[dict[str, Any]] = []
        self.failed: list[dict[str, Any]] = []
        self.latencies: list[float] = []
        self._clock = time.perf_counter()

    def add(
        self, record: MemoryEvalRecord | RecordError, result: ThreadResult | None
    ) -> list[dict[str, Any]]:
        """Take one item's result; return its line (none when the thread failed)."""
        now = time.perf_counter()
        self.latencies.append((now - self._clock) * 1000.0)
        self._clock = now
        assert result is not None and not isinstance(record, RecordError)
        if result.output is None:
            self.failed.append({"eval_id": result.dialogue_id, "error": result.error})
            return []
        line = item_line(record, result, self.units(record.individual_id))
        self.lines.append(line)
        return [line]

    def summary(self) -> dict[str, Any]:
        """The pooled figures, the failures and the latency percentiles."""
        latencies = sorted(self.latencies)
        return memory_summary(self.lines) | {
            "failed": self.failed,
            "latency_ms_p50": _percentile(latencies, 0.5),
            "latency_ms_p95": _percentile(latencies, 0.95),
        }


def _percentile(sorted_values: Sequence[float], q: float) -> float | None:
    if not sorted_values:
        return None
    return round(sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))], 3)
