"""The goal tracker's local judgements inside its nodes (paper 000, §5.2, Stages 3-4).

Link evolution for a new goal, the per-utterance status cue, and naming a goal's service
among siblings by the dialogue's evidence; :mod:`nodes.goal_tracking.tracker` calls them when the
tracker's judge is local (the LLM counterparts are in :mod:`nodes.goal_tracking.llm_steps`).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from evals.datasets.sgd_schema import is_transactional, load_sgd_schema
from nodes.context import Context
from nodes.goal_tracking.judges.goal_extraction.local_stages import (
    evolve,
    focus_goal,
    offers_results,
)
from nodes.goal_tracking.judges.goal_extraction.service_evidence import ServiceEvidence
from nodes.goal_tracking.judges.goal_extraction.status_cues import status_cue
from stores.goal_memory import Goal, GoalMemory


@functools.lru_cache(maxsize=8)
def schema_for(path: str | None) -> Mapping[str, Any] | None:
    """The SGD schema at ``path`` (None without one), loaded once."""
    return load_sgd_schema(path) if path else None


@functools.lru_cache(maxsize=8)
def service_evidence(path: str | None) -> ServiceEvidence | None:
    """The sibling-service evidence of the schema at ``path``, built once."""
    schema = schema_for(path)
    return ServiceEvidence.build(schema) if schema else None


def evolve_links(memory: GoalMemory, goal: Goal, context: Context, schema: Any) -> None:
    """Stage 3: link a new goal to its prerequisites among its neighbours (relation >= delta)."""
    others = memory.neighbours(goal.dialogue_id, goal.description, context.top_k + 1)
    lookup = (
        None
        if not (goal.domain and goal.intent)
        else not is_transactional(goal.domain, goal.intent, schema)
    )
    for other_id, relation, prerequisite in evolve(
        goal, others, delta=context.delta, is_lookup=lookup
    ):
        if prerequisite:
            memory.add_dependency(goal.dialogue_id, goal.id, other_id, relation=relation)


def apply_status_cue(
    memory: GoalMemory,
    dialogue_id: str,
    current: Mapping[str, Any],
    named: list[str],
    judge: str,
    schema: Any,
    history: Sequence[Mapping[str, Any]],
) -> None:
    """Apply the utterance's status cue to the goal it is about (named, else the latest live).

    A system utterance that presents results completes a lookup.
    """
    goals = memory.goals(dialogue_id)
    focus = focus_goal(goals, named)
    if focus is None:
        return
    cue = status_cue(current["speaker"], current["text"])
    status = cue.status if cue else None
    if (
        status is None
        and current["speaker"] == "SYSTEM"
        and offers_results(current["text"], user_said(history, current["turn"]))
    ):
        if focus.intent and not is_transactional(focus.domain, focus.intent, schema):
            status = "completed"  # a lookup is done once its results are presented
    if status is not None:
        memory.transition(dialogue_id, focus.id, status, turn=current["turn"], proposed_by=judge)


def rename_by_evidence(
    memory: GoalMemory,
    dialogue_id: str,
    context: Context,
    history: Sequence[Mapping[str, Any]],
    cursor: int,
    turn: int,
) -> None:
    """Move goals to the sibling service the dialogue has now shown to be the one."""
    evidence = service_evidence(context.schema_path)
    if evidence is None:
        return
    goals = memory.goals(dialogue_id)
    said = said_so_far(history, cursor)
    for goal in goals:
        better = evidence.preferred(goal.domain, goal.intent, said)
        taken = any(g.domain == better and g.intent == goal.intent for g in goals)
        if better and better != goal.domain and not taken:
            memory.rename_service(dialogue_id, goal.id, better, turn=turn)


def said_so_far(history: Sequence[Mapping[str, Any]], cursor: int) -> str:
    """Every utterance up to and including the current one."""
    return " ".join(u["text"] for u in history[: cursor + 1])


def user_said(history: Sequence[Mapping[str, Any]], before: int) -> str:
    """Everything the user said before utterance ``before`` (their names are not results)."""
    return " ".join(u["text"] for u in history[: before - 1] if u["speaker"] == "USER")
