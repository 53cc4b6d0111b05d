"""The goal tracker's local judgements inside its nodes (paper 000, §5.2, Stage 3).

Link evolution for a new goal and naming a goal's service among siblings by the dialogue's
evidence; :mod:`nodes.goal_tracking.tracker` calls them when the tracker's judge is local (the
LLM counterparts are in :mod:`nodes.goal_tracking.llm_steps`; the status update is in
:mod:`nodes.goal_tracking.status_update`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Mapping
from typing import Any

from todeval.evals.datasets.sgd_schema import is_transactional, load_sgd_schema
from todeval.nodes.context import Context
from todeval.nodes.goal_tracking.judges.goal_extraction.local_stages import ServiceEvidence, evolve
from todeval.nodes.goal_tracking.settings import GoalTrackingSettings
from todeval.stores.goal_memory import Goal, GoalMemory


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
    others = memory.neighbours(
        goal.dialogue_id, goal.description, GoalTrackingSettings.of(context).top_k + 1
    )
    lookup = (
        None
        if not (goal.domain and goal.intent)
        else not is_transactional(goal.domain, goal.intent, schema)
    )
    for other_id, relation, prerequisite in evolve(
        goal, others, delta=GoalTrackingSettings.of(context).delta, is_lookup=lookup
    ):
        if prerequisite:
            memory.add_dependency(goal.dialogue_id, goal.id, other_id, relation=relation)


def rename_by_evidence(
    memory: GoalMemory,
    dialogue_id: str,
    evidence: ServiceEvidence,
    said: Callable[[], Collection[str]],
    turn: int,
) -> None:
    """Move goals to the sibling service the dialogue has now shown to be the one.

    ``said``: the services the dialogue so far evidences (:meth:`ServiceEvidence.evidenced`),
    asked only when a goal's service has a sibling offering its intent.
    """
    goals = memory.goals(dialogue_id)
    services_said: Collection[str] | None = None
    for goal in goals:
        if not evidence.rivals(goal.domain, goal.intent):
            continue  # no other service to prefer
        services_said = said() if services_said is None else services_said
        better = evidence.preferred_among(goal.domain, goal.intent, services_said)
        taken = any(g.domain == better and g.intent == goal.intent for g in goals)
        if better and better != goal.domain and not taken:
            memory.rename_service(dialogue_id, goal.id, better, turn=turn)


def parent_for(memory: GoalMemory, dialogue_id: str, service: str) -> str | None:
    """The goal a new goal of ``service`` is a sub-goal of: the service's first goal in memory.

    ATOD's ``parent_id`` (§5.1) links a goal to the one it refines. A later goal of the same
    service is the next step of the same task (the reservation after the restaurant search,
    the purchase after the event search), so its parent is the first goal of that service;
    goals without a service (schema-free) have none.
    """
    if not service:
        return None
    same = [goal for goal in memory.goals(dialogue_id) if goal.domain == service]
    return min(same, key=lambda goal: goal.created_turn).id if same else None
