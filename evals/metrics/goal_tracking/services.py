"""Goal-tracking figures on some services only: seen vs held-out services (ATOD, paper 000).

Dialogues mix seen and unseen services, so the split is per goal: :func:`restrict_to_services`
keeps the tracked and gold goals of the given services. A tracked goal of another service is
then neither right nor wrong; costs and memory queries belong to no one service and are dropped.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from todeval.evals.goal_tracking_schema import AtodDialogue, AtodTurn
from todeval.evals.metrics.goal_tracking.goal_records import GoalRecord


def restrict_to_services(result: Mapping[str, Any], services: Collection[str]) -> dict[str, Any]:
    """A scored result with only the goals of ``services`` (exact names), tracked and gold.

    Tracked goals name their service in ``service`` (or ``domain``), gold goals in
    ``domain``; ``costs`` and ``queries`` come back empty.
    """
    wanted = set(services)
    goals = [goal for goal in result.get("goals") or [] if _service(goal) in wanted]
    kept = {str(goal["goal_id"]) for goal in goals}
    goals = [
        dict(goal) | {"dependencies": [d for d in goal.get("dependencies") or [] if d in kept]}
        for goal in goals
    ]
    turns = [
        dict(turn) | {"goal_states": {g: s for g, s in turn["goal_states"].items() if g in kept}}
        for turn in result.get("turns") or []
    ]
    gold = result.get("gold")
    if gold is not None:
        gold = gold if isinstance(gold, AtodDialogue) else AtodDialogue.model_validate(gold)
        gold = _gold_of(gold, wanted)
    return dict(result) | {"goals": goals, "turns": turns, "gold": gold, "costs": [], "queries": []}


def _service(goal: GoalRecord) -> str:
    return str(goal.get("service") or goal.get("domain") or "")


def _gold_of(gold: AtodDialogue, services: set[str]) -> AtodDialogue:
    """The gold with only the goals of ``services``."""
    ids = {goal.id for goal in gold.goal_list if goal.domain in services}
    turns = [
        AtodTurn(
            turn_id=turn.turn_id,
            speaker=turn.speaker,
            utterance=turn.utterance,
            goal_status_changes=[c for c in turn.goal_status_changes if c.goal_id in ids],
            all_goals={g: s for g, s in turn.all_goals.items() if g in ids},
        )
        for turn in gold.turns
    ]
    return gold.model_copy(
        update={"goal_list": [g for g in gold.goal_list if g.id in ids], "turns": turns}
    )
