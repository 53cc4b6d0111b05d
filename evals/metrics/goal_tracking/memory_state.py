"""Memory recall over the memory state (ATOD, paper 000, §6.2): slot values, status, history.

The paper's Memory Recall Accuracy matches "the ground-truth memory state, including slot
values, goal statuses, and historical context": a query is right only when it retrieved the
right goal *and* memory's ``status``, ``history`` (repeats merged) and ``slots`` (none
contradicting the gold, compared case- and space-blind) match the gold just before the
utterance. Gold slot values are final, so one not said yet is no error. A query that rightly
retrieved nothing counts as right; one without ground truth is not judged.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from todeval.evals.goal_tracking_schema import AtodDialogue
from todeval.evals.metrics.goal_tracking.agentic_capability import expected_goals
from todeval.evals.metrics.goal_tracking.goal_records import GoalRecord, is_mentioned, ratio, round4

ASPECTS = ("status", "history", "slots")
"""What a retrieved goal's memory entry is checked on, besides its identity."""


def gold_memory_state(gold: AtodDialogue, goal_id: str, turn: int) -> dict[str, Any] | None:
    """The gold goal ``goal_id`` as memory should hold it before utterance ``turn``.

    Returns:
        ``{"status", "history", "slots"}``; None when the goal is unknown or not yet mentioned.
    """
    goal = next((g for g in gold.goal_list if g.id == goal_id), None)
    if goal is None:
        return None
    history: list[str] = []
    status = "not_mentioned"
    for utterance in gold.turns:
        if utterance.turn_id >= turn:
            break
        for change in utterance.goal_status_changes:
            if change.goal_id == goal_id:
                status = change.new_status
                history = _merged([*history, status])
        status = utterance.all_goals.get(goal_id, status)
    if not is_mentioned(status):
        return None
    return {"status": status, "history": history or [status], "slots": dict(goal.slot_values)}


def aspect_matches(
    held: Mapping[str, Any] | None, gold_state: Mapping[str, Any] | None
) -> dict[str, bool | None]:
    """Per aspect, whether memory's entry matches the gold state (None: not judged)."""
    if held is None or gold_state is None:
        return dict.fromkeys(ASPECTS)
    gold_slots = {str(k): _norm(v) for k, v in (gold_state.get("slots") or {}).items()}
    held_slots = {str(k): _norm(v) for k, v in (held.get("slots") or {}).items()}
    shared = set(gold_slots) & set(held_slots)
    return {
        "status": held.get("status") == gold_state["status"],
        "history": _merged(list(held.get("history") or [])) == list(gold_state["history"]),
        "slots": all(gold_slots[k] == held_slots[k] for k in shared) if gold_slots else None,
    }


def memory_state_counts(queries: Iterable[GoalRecord]) -> Counter[str]:
    """``state_correct``/``state_judged`` and ``<aspect>_correct``/``<aspect>_judged`` counts.

    Each query is ``{"retrieved", "expected", "held", "gold_state"}``: ``retrieved`` and
    ``expected`` as :func:`~.agentic_capability.memory_recall_accuracy` reads them, ``held``
    what memory held for the retrieved goal, ``gold_state`` :func:`gold_memory_state` of it.
    """
    counts: Counter[str] = Counter()
    for query in queries:
        expected = expected_goals(query)
        if expected is None:
            continue
        retrieved = query.get("retrieved")
        counts["state_judged"] += 1
        if retrieved is None:
            counts["state_correct"] += not expected
            continue
        if retrieved not in expected:
            continue
        matches = aspect_matches(query.get("held"), query.get("gold_state"))
        for aspect, match in matches.items():
            if match is not None:
                counts[f"{aspect}_judged"] += 1
                counts[f"{aspect}_correct"] += match
        counts["state_correct"] += all(match is not False for match in matches.values())
    return counts


def memory_state_report(counts: Mapping[str, int]) -> dict[str, Any]:
    """``memory_recall_state_accuracy`` and ``memory_recall_by_aspect`` from the counts."""
    return {
        "memory_recall_state_accuracy": round4(
            ratio(counts.get("state_correct", 0), counts.get("state_judged", 0))
        ),
        "memory_recall_by_aspect": {
            aspect: round4(
                ratio(counts.get(f"{aspect}_correct", 0), counts.get(f"{aspect}_judged", 0))
            )
            for aspect in ASPECTS
        },
    }


def _merged(statuses: Sequence[Any]) -> list[str]:
    merged: list[str] = []
    for status in statuses:
        if not merged or merged[-1] != status:
            merged.append(str(status))
    return merged


def _norm(value: Any) -> str:
    return " ".join(str(value).lower().split())
