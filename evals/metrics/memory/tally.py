"""Memory metrics over a run, as items stream in (MAP / MS-TOD, paper 001, §5.1).

:class:`MemoryTally` keeps each item's ``items.jsonl`` line (its
:func:`~evals.metrics.memory.scores.item_scores`) and the latencies, and pools them
(:func:`memory_summary`).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from todeval.evals.memory_schema import MemoryEvalRecord, MemoryUnit
from todeval.evals.metrics.memory.scores import item_scores, memory_summary
from todeval.evals.results import MemoryItemLine, ThreadResult
from todeval.evals.schema import RecordError

TOP_REASONS = 5

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
    activated = output.get("activated", [])
    scored: dict[str, Any] = output.get("gpt4_score") or {}
    line = {
        "eval_id": item.eval_id,
        "individual_id": record.individual_id,
        "intent": item.intent,
        "retrieved_unit_ids": None
        if activated is None
        else [row["unit"]["unit_id"] for row in activated],
        "relevant_session_ids": item.relevant_session_ids,
        "relevant_units": sum(1 for unit in units if unit.session_id in relevant),
        "selected": output.get("selected", []),
        "missing_slots": output.get("missing_slots"),
        "task_goal": dict(item.task_goal),
        "response": output.get("response"),
        "reference_response": item.reference_response,
        "dialogue_state": output.get("dialogue_state"),
        "state_source": output.get("state_source"),
        "ambiguous_slots": output.get("ambiguous_slots") or [],
        "gpt4_score": scored.get("score"),
        "gpt4_score_reason": scored.get("reason"),
        "gpt4_rationale": scored.get("rationale"),
        "dte": repair.get("dte"),
        "repair_success": repair.get("success"),
        "repair": repair or None,
        "judges": output.get("judges", {}),
        "reasons": output.get("reasons", []),
        "thread_id": result.thread_id,
    }
    ceiling_inputs = {
        "context_text": "\n".join(turn.utterance for turn in item.context),
        "relevant_memory": relevant_memory(units, relevant),
    }
    scores = item_scores(line | ceiling_inputs)
    return MemoryItemLine.model_validate(line | {"scores": scores}).row()


def relevant_memory(
    units: Sequence[MemoryUnit], relevant_session_ids: Iterable[str]
) -> list[tuple[str | None, str]]:
    """What the relevant sessions' units state, as the ceiling reads it.

    ``(slot, value)`` for a unit that names its slot and value, else ``(None, answer)``.
    """
    relevant = set(relevant_session_ids)
    return [
        (unit.slot, unit.value) if unit.slot and unit.value else (None, unit.answer)
        for unit in units
        if unit.session_id in relevant
    ]


class MemoryTally:
    """The item lines of a memory run and the time between finished items.

    Args:
        units: An individual's stored units, for the relevant-unit counts of Recall@k and the
            ceiling; none for a setting without memory.
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
        """The pooled figures, the failures, the commonest reasons and the latencies.

        ``reasons``: why judges left figures null (``"reader: ..."``), with how many items
        said so, commonest first (at most :data:`TOP_REASONS`).
        """
        latencies = sorted(self.latencies)
        reasons = Counter(reason for line in self.lines for reason in line.get("reasons") or [])
        return memory_summary(self.lines) | {
            "reasons": [
                {"reason": reason, "items": n} for reason, n in reasons.most_common(TOP_REASONS)
            ],
            "failed": self.failed,
            "latency_ms_p50": _percentile(latencies, 0.5),
            "latency_ms_p95": _percentile(latencies, 0.95),
        }


def _percentile(sorted_values: Sequence[float], q: float) -> float | None:
    if not sorted_values:
        return None
    return round(sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))], 3)
