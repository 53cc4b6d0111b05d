"""The ceiling of MAP's memory figures: what could be confirmed before any repair (paper 001).

A confirmation response can only state what the system has: its memory and the new session's
context. Gold values beyond both (a system-side default nobody said, a value from a dialogue the
user never had with this system) can only come from the proactive repair loop (§4.3). So every
memory figure is reported beside its ceiling.

**Recoverable before repair.** A gold slot ``(s, v)`` of an eval item is recoverable when

- *memory*: a memory unit of one of the item's relevant sessions states ``v``: a unit that
  names its slot (local units, one per task-goal slot) counts when its slot is ``s`` and
  :func:`~evals.metrics.memory.slot_mention.slot_value_mentioned` finds ``v`` in its value; a
  unit without a slot name (MS-TOD's own QA memory, Figure 13) counts when its answer mentions
  ``v``; or
- *context*: the item's context (every turn of the new session before the confirmation,
  including a re-entry line such as "Hi again, it's about ...") mentions ``v``, read the same
  way (``slot_value_mentioned(v, context, slot=s)``, so "Yes, I want trip insurance" states
  ``trip_protection: True``).

The ceiling reads memory *as stored*, not as retrieved: a value that retrieval or the top-k
selection loses is recoverable but missed. Mentions are read as slot accuracy reads a response,
so the ceiling is the slot accuracy of a reader that states every recoverable value and nothing
else. A reader can still beat it by guessing (a schema default such as ``number_of_seats: 2``);
:func:`ceiling_scores` counts those guesses apart.

Per item: ``slot_ceiling`` = recoverable gold slots / gold slots; ``jga_ceiling`` = 1 when every
gold slot is recoverable; ``dte_floor`` = 1 when every gold slot is recoverable, else 2 (a
perfect reader's confirmation is turn 1, and one repair turn is the least that can fetch the
rest, from a user who answers everything asked at once). Pooled over a run: the sums of the
counts (``recoverable_slots / gold_slots``), beside the means of the per-item shares. Recall@k
and the repair success rate need no ceiling: a perfect ranking scores Recall@k 1 (it is capped,
see :mod:`evals.metrics.memory.scores`), and the simulated user knows every gold value.
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
    """Where each gold slot's value can be had before repair (empty set: nowhere).

    Args:
        task_goal: Slot -> gold value.
        memory: What the units of the item's relevant sessions state.
        context: The new session's turns before the confirmation, as one text.

    Returns:
        Slot -> the sources holding its gold value (``memory``, ``context``), in goal order.
    """
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
    """One item's ceiling figures and the counts a run pools (see the module docstring).

    Args:
        task_goal: Slot -> gold value.
        memory: What the units of the item's relevant sessions state.
        context: The new session's turns before the confirmation, as one text.
        response: The confirmation response (None: not written; its counts are None).

    Returns:
        ``slot_ceiling``, ``jga_ceiling``, ``dte_floor`` and :data:`CEILING_COUNTS`; every
        figure None for an empty goal.
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
    """A run's ceilings: per-item means, pooled shares and the DTE floor.

    Args:
        per_item: Each item's scores (:func:`ceiling_scores` keys; items scored without
            memory and context have them None and are left out).
        looped: Per item, whether its repair loop ran (DTE is averaged over those items).

    Returns:
        ``slot_ceiling``, ``jga_ceiling`` (item means, beside ``slot_accuracy`` and ``jga``);
        ``slot_accuracy_pooled``, ``slot_ceiling_pooled`` and the pooled shares of gold slots
        recoverable from memory (``slot_ceiling_memory``) and stated in the context
        (``slot_ceiling_context``); ``ceiling_reached``: the share of recoverable gold slots
        the responses state; ``slots_guessed``: correct gold slots that were not recoverable,
        per gold slot; ``dte_floor`` over the looped items; and the pooled counts.
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
