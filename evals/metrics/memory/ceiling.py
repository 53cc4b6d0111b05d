"""The ceiling of MAP's memory figures: what could be confirmed before any repair (paper 001).

A confirmation can only state what the system has: its memory and the new session's context;
other gold values can only come from the repair loop (§4.3). So every memory figure is
reported beside its ceiling. A gold slot ``(s, v)`` is recoverable when a unit of a relevant
session states ``v`` (a named unit of slot ``s``, or an unnamed QA unit's answer, Figure 13)
or the item's context mentions it, read by
:func:`~evals.metrics.memory.slot_mention.slot_value_mentioned` as slot accuracy reads a
response. Memory is read as stored, not as retrieved. A reader can still beat the ceiling by
guessing (a schema default); :func:`ceiling_scores` counts those apart.

Per item: ``slot_ceiling`` = recoverable / gold slots; ``jga_ceiling`` = 1 when all are
recoverable; ``dte_floor`` = 1 then, else 2 (one repair turn is the least that fetches the
rest). Recall@k and repair success need no ceiling (Recall@k is capped, the simulated user
knows every gold value).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

from todeval.evals.metrics.memory.slot_mention import slot_value_mentioned

__all__ = [
    "CEILING_COUNTS",
    "MemoryFact",
    "ceiling_scores",
    "ceiling_summary",
    "recoverable_slots",
]

Source = Literal["memory", "context"]

MemoryFact = tuple[str | None, str]
"""What one stored unit states: ``(slot, value)``, or ``(None, answer)`` without a slot name."""

#: The per-item counts :func:`ceiling_scores` returns (pooled by summing).
CEILING_COUNTS = (
    "gold_slots",
    "recoverable_slots",
    "memory_slots",
    "context_slots",
    "correct_slots",
    "correct_recoverable_slots",
    "correct_unrecoverable_slots",
)


def recoverable_slots(
    task_goal: Mapping[str, str], memory: Iterable[MemoryFact], context: str
) -> dict[str, frozenset[Source]]:
    """Slot -> the sources (``memory``, ``context``) holding its gold value before repair."""
    facts = list(memory)
    found: dict[str, frozenset[Source]] = {}
    for slot, value in task_goal.items():
        sources: set[Source] = set()
        if any(_states(fact, slot, value) for fact in facts):
            sources.add("memory")
        if slot_value_mentioned(value, context, slot=slot):
            sources.add("context")
        found[slot] = frozenset(sources)
    return found


def _states(fact: MemoryFact, slot: str, value: str) -> bool:
    fact_slot, text = fact
    if fact_slot is not None and fact_slot != slot:
        return False
    return slot_value_mentioned(value, text, slot=slot)


def ceiling_scores(
    task_goal: Mapping[str, str],
    memory: Sequence[MemoryFact],
    context: str,
    response: str | None,
) -> dict[str, float | None]:
    """One item's ceiling figures and the counts a run pools; None for an empty goal.

    ``response`` None (not written) makes its counts None.
    """
    if not task_goal:
        return {key: None for key in ("slot_ceiling", "jga_ceiling", "dte_floor", *CEILING_COUNTS)}
    where = recoverable_slots(task_goal, memory, context)
    recoverable = {slot for slot, sources in where.items() if sources}
    total = len(task_goal)
    scores: dict[str, float | None] = {
        "slot_ceiling": len(recoverable) / total,
        "jga_ceiling": float(len(recoverable) == total),
        "dte_floor": 1.0 if len(recoverable) == total else 2.0,
        "gold_slots": float(total),
        "recoverable_slots": float(len(recoverable)),
        "memory_slots": float(sum("memory" in s for s in where.values())),
        "context_slots": float(sum("context" in s for s in where.values())),
    }
    if response is None:
        return scores | {k: None for k in CEILING_COUNTS[4:]}
    right = {s for s, v in task_goal.items() if slot_value_mentioned(v, response, slot=s)}
    return scores | {
        "correct_slots": float(len(right)),
        "correct_recoverable_slots": float(len(right & recoverable)),
        "correct_unrecoverable_slots": float(len(right - recoverable)),
    }


def ceiling_summary(
    per_item: Sequence[Mapping[str, float | None]], looped: Sequence[bool]
) -> dict[str, float | None]:
    """A run's ceilings: per-item means, pooled shares and the DTE floor over the looped items.

    Items scored without memory and context are left out. ``ceiling_reached`` is the share of
    recoverable gold slots the responses state; ``slots_guessed`` the correct gold slots that
    were not recoverable, per gold slot.
    """
    judged = [s for s in per_item if s.get("gold_slots") is not None]
    answered = [s for s in judged if s.get("correct_slots") is not None]
    totals = {key: sum(s.get(key) or 0.0 for s in judged) for key in CEILING_COUNTS[:4]}
    totals |= {key: sum(s.get(key) or 0.0 for s in answered) for key in CEILING_COUNTS[4:]}
    answered_gold = sum(s.get("gold_slots") or 0.0 for s in answered)
    floors = [s.get("dte_floor") for s, ran in zip(per_item, looped, strict=True) if ran]
    return {
        "slot_ceiling": _mean(s.get("slot_ceiling") for s in judged),
        "jga_ceiling": _mean(s.get("jga_ceiling") for s in judged),
        "slot_accuracy_pooled": _share(totals["correct_slots"], answered_gold),
        "slot_ceiling_pooled": _share(totals["recoverable_slots"], totals["gold_slots"]),
        "slot_ceiling_memory": _share(totals["memory_slots"], totals["gold_slots"]),
        "slot_ceiling_context": _share(totals["context_slots"], totals["gold_slots"]),
        "ceiling_reached": _share(
            totals["correct_recoverable_slots"],
            sum(s.get("recoverable_slots") or 0.0 for s in answered),
        ),
        "slots_guessed": _share(totals["correct_unrecoverable_slots"], answered_gold),
        "dte_floor": _mean(f for f in floors if f is not None) if floors else None,
        **{key: (totals[key] if judged else None) for key in CEILING_COUNTS},
    }


def _mean(values: Iterable[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return sum(kept) / len(kept) if kept else None


def _share(part: float, whole: float) -> float | None:
    return part / whole if whole else None
