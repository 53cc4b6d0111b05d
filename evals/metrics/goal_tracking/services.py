"""Goal-tracking figures on some services only: seen vs held-out services (ATOD, paper 000).

A tracker trained on some services is checked on the services it never saw. A dialogue often
mixes both, so the split is made per goal, not per dialogue: :func:`restrict_to_services` keeps
a scored result's tracked goals and gold goals of the given services (and their states turn by
turn), and :class:`~evals.metrics.goal_tracking.report.GoalTrackingTally` scores what is left as
usual. Detection then counts a tracked goal of another service as neither right nor wrong, and
per-turn costs and memory queries, which belong to no one service, are dropped.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from todeval.evals.goal_tracking_schema import AtodDialogue, AtodTurn
from todeval.evals.metrics.goal_tracking.goal_records import GoalRecord


def restrict_to_services(result: Mapping[str, Any], services: Collection[str]) -> dict[str, Any]:
    """A scored result with only the goals of ``services``, tracked and gold.

    Args:
        result: ``{"dialogue_id", "gold", "goals", "turns", ...}`` as the tally reads it; the
            tracked goals name their service in ``service`` (or ``domain``), gold goals in
            ``domain``.
        services: The services to keep (exact names).

    Returns:
        The result with the other services' goals removed from ``goals`` (and from the kept
        goals' ``dependencies``), from each turn's ``goal_states`` and from the gold; ``costs``
        and ``queries`` empty.
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
