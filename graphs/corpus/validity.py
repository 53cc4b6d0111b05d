"""Beside every figure, who decided it and how far that judge agrees with labels.

Each corpus figure is decided by some judge roles (GSR by the segmenter and the turn-quality
teachers; TSR's NL-assertion channel by the NL-assertion judge ...) or by none (TCRR counts
repeated calls in the log). :func:`figure_validity` gives, per figure, the judges the run used
for it and their validity cards (:mod:`nodes.judges.validity`); a figure is *weak* when a card
says its judge disagrees with people, and *unchecked* when a judge that decided it has no card
(an LLM, or a local judge nobody has checked yet).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from todeval.nodes.context import Context
from todeval.nodes.judges.validity import ValidityCard, card_for

FIGURE_ROLES: dict[str, tuple[tuple[str, str], ...]] = {
    "gsr": (("segmentation", "segmentation_judge"), ("turn_quality", "teachers")),
    "goal_detection_f1": (("goal_extraction", "goal_extraction_judge"),),
    "status_accuracy": (("goal_extraction", "goal_extraction_judge"),),
    "dgcr": (("goal_extraction", "goal_extraction_judge"),),
    "memory_recall_accuracy": (("goal_extraction", "goal_extraction_judge"),),
    "tsr": (("nl_assertion", "nl_assertion_judge"),),
    "tool_correctness": (),
    "param_validity": (),
    "tcrr": (),
    "shift_recovery_rate": (("shift_detection", "shift_detection_judge"),),
    "recall_at_5": (("intent_capture", "memory_planner"),),
    "slot_accuracy": (("reader", "reader_judge"),),
    "jga": (("reader", "reader_judge"),),
    "dte": (("repair_agent", "repair_agent"), ("user_simulator", "user_simulator")),
    "repair_success_rate": (("repair_agent", "repair_agent"), ("supervisor", "supervisor_judge")),
    "proactive_plan_score": (("target_planning_judge", "target_planning_judge"),),
    "proactive_guidance_score": (("guidance_judge", "guidance_judge"),),
}
"""Figure -> the judge roles that decide it, each with its ``Context`` field."""


def _specs(context: Context, field: str) -> list[str]:
    value = getattr(context, field)
    return list(value) if isinstance(value, list) else [str(value)]


def _cards(role: str, specs: list[str]) -> dict[str, ValidityCard | None]:
    """The cards of a role's judges; for a panel of teachers, the vote's card when it has one."""
    cards: dict[str, ValidityCard | None] = {}
    if len(specs) > 1:
        vote = f"vote:{','.join(specs)}"
        card = card_for(role, vote) if all(s.startswith("local") for s in specs) else None
        if card is not None:
            return {f"{role}={vote}": card}
    for spec in specs:
        cards[f"{role}={spec}"] = card_for(role, spec)
    return cards


def figure_validity(context: Context, figures: Iterable[str]) -> dict[str, dict[str, Any]]:
    """Per figure: its judges, their cards, and whether it is weak or unchecked.

    Returns:
        ``{figure: {"judges": {role: [specs]}, "cards": {"role=spec": card | None}, "weak":
        bool, "unchecked": ["role=spec" without a card], "note": str}}``.
    """
    validity: dict[str, dict[str, Any]] = {}
    for figure in figures:
        roles = FIGURE_ROLES.get(figure, ())
        judges = {role: _specs(context, field) for role, field in roles}
        cards: dict[str, ValidityCard | None] = {}
        for role, specs in judges.items():
            cards |= _cards(role, specs)
        unchecked = [spec for spec, card in cards.items() if card is None]
        weak = [spec for spec, card in cards.items() if card is not None and card.weak]
        if not roles:
            note = "counted from the logs by a rule: no judge decides it"
        elif weak:
            note = f"decided by judges that agree poorly with people: {', '.join(weak)}"
        elif unchecked:
            note = f"decided by judges not checked against labels: {', '.join(unchecked)}"
        else:
            note = "every judge behind it is checked against labels (see the cards)"
        validity[figure] = {
            "judges": judges,
            "cards": {spec: card.summary() if card else None for spec, card in cards.items()},
            "weak": bool(weak),
            "unchecked": unchecked,
            "note": note,
        }
    return validity
