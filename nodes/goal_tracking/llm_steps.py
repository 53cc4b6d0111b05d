"""The goal tracker's LLM path, inside its nodes.

When ``Context.goal_extraction_judge`` names an LLM, one call per utterance extracts the goals,
answers the existence check against the retrieved goals (a match when the judge's confidence
is at least tau) and gives each goal's status; a second call links a goal when one is inserted,
and the audit asks every ``audit_every`` utterances and at the end. Each call's tokens go into
the utterance's cost record.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from todeval.nodes.context import Context
from todeval.nodes.goal_tracking.judges.goal_extraction import Utterance
from todeval.nodes.goal_tracking.judges.goal_extraction.llm import render_schema
from todeval.nodes.goal_tracking.roles import llm_goal_tracking
from todeval.nodes.goal_tracking.settings import GoalTrackingSettings
from todeval.nodes.judges.spec import parse_spec
from todeval.stores.goal_memory import Goal, GoalMemory


def uses_llm(context: Context) -> bool:
    """Whether the tracker's judges are LLMs (the extraction spec decides for all of them)."""
    return not parse_spec(context.spec("goal_extraction")).is_local


def add_cost(total: Mapping[str, int], more: Mapping[str, int]) -> dict[str, int]:
    """Two cost records' calls and tokens summed."""
    keys = ("llm_calls", "prompt_tokens", "completion_tokens")
    return {key: int(total.get(key, 0)) + int(more.get(key, 0)) for key in keys}


def llm_candidates(
    context: Context,
    memory: GoalMemory,
    dialogue_id: str,
    utterance: Utterance,
    recent: Sequence[Utterance],
    schema: Any,
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Stages 0-2 in one call: candidates with their match and status, and the call's cost."""
    updater = llm_goal_tracking(context.spec("goal_extraction"), context.llm.max_retries).updater
    neighbours = memory.neighbours(
        dialogue_id, utterance.text, GoalTrackingSettings.of(context).top_k
    )
    shown: dict[str, Goal] = {g.id: g for g, _ in neighbours}
    for goal in memory.goals(dialogue_id, ["open", "pending"]):
        shown.setdefault(goal.id, goal)
    update = updater.update(utterance, recent, list(shown.values()), render_schema(schema))
    candidates = [
        {
            "description": goal.description,
            "service": goal.service,
            "intent": goal.intent,
            "slots": dict(goal.slots),
            "confidence": goal.confidence or 0.0,
            "evidence": update.reason or "llm turn update",
            "memory_id": goal.matched(GoalTrackingSettings.of(context).tau),
            "match_confidence": goal.confidence or 0.0,
            "match": f"{context.spec('goal_extraction')}: confidence {goal.confidence}",
            "status": goal.status,
        }
        for goal in update.goals
    ]
    return candidates, update.call.cost()


def llm_links(
    context: Context, memory: GoalMemory, goal: Goal
) -> tuple[list[tuple[str, float, bool]], dict[str, int]]:
    """Stage 3: the new goal's links (relation >= delta or a dependency) and the call's cost."""
    evolver = llm_goal_tracking(context.spec("goal_extraction"), context.llm.max_retries).evolver
    # Bounded like every tracker prompt: the new goal's top-k neighbours, not all of memory.
    nearest = memory.neighbours(
        goal.dialogue_id, goal.description, GoalTrackingSettings.of(context).top_k + 1
    )
    links = evolver.links(
        goal, [other for other, _ in nearest], delta=GoalTrackingSettings.of(context).delta
    )
    return links, evolver.last.cost()


def llm_audit(
    context: Context, memory: GoalMemory, dialogue_id: str, history: Sequence[Mapping[str, Any]]
) -> tuple[list[tuple[str, str, str]], dict[str, int]]:
    """Stage 4: out-of-date statuses of the live goals, and the call's cost."""
    auditor = llm_goal_tracking(context.spec("goal_extraction"), context.llm.max_retries).auditor
    said = [Utterance(u["turn"], u["speaker"], u["text"]) for u in history]
    updates = auditor.audit(memory.goals(dialogue_id), said)
    return [(g, str(status), why) for g, status, why in updates], auditor.last.cost()
