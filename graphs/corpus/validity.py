"""Beside every figure, who decided it, how far that judge agrees with labels, and its floor.

Each corpus figure is decided by some judge roles (GSR by the segmenter and the turn-quality
teachers; TSR's NL-assertion channel by the NL-assertion judge ...) or by none (TCRR counts
repeated calls in the log). :func:`figure_validity` gives, per figure, the judges the run used
for it and their validity cards (:mod:`nodes.judges.validity`); a figure is *weak* when a card
says its judge disagrees with people, and *unchecked* when a judge that decided it has no card
(an LLM, or a local judge nobody has checked yet).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from todeval.nodes.context import Context
from todeval.nodes.judges.floors import EVALUATE_PROACTIVE, FIGURES, Floor, floors_for
from todeval.nodes.judges.validity import ValidityCard, card_for

FIGURE_ROLES: dict[str, tuple[str, ...]] = {
    "gsr": ("segmentation", "turn_quality"),
    "goal_detection_f1": ("goal_extraction",),
    "status_accuracy": ("goal_extraction",),
    "dgcr": ("goal_extraction",),
    "memory_recall_accuracy": ("goal_extraction",),
    "tsr": ("nl_assertion",),
    "tool_correctness": (),
    "param_validity": (),
    "tcrr": (),
    "shift_recovery_rate": ("shift_detection",),
    "recall_at_5": ("intent_capture",),
    "slot_accuracy": ("reader",),
    "jga": ("reader",),
    "dte": ("repair_agent", "user_simulator"),
    "repair_success_rate": ("repair_agent", "supervisor"),
    "proactive_plan_score": ("target_planning",),
    "proactive_guidance_score": ("guidance",),
}
"""Figure -> the declared judge roles that decide it."""


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
        judges = {role: context.specs(role) for role in roles}
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


MIXED_FIGURES = {"gsr": "goal_success", "dgcr": "goal_tracking"}
"""Figures of ``evaluate`` that count records of any kind (their suite): on a corpus with more
such records than agent transcripts, the tool domains' floor does not apply."""


def figure_floors(summary: Mapping[str, Any]) -> dict[str, Floor]:
    """Per figure of an ``evaluate`` summary, the floor do-nothing agents reach (if measured).

    Floors exist for agent transcripts of the live tool domains (the domains the goal-shift
    section found) and for ProactiveEval's figures. A figure that also counts other records (a
    corpus mixing agent transcripts with a team's own logs) gets none: its floor is unknown.
    """
    metrics = summary.get("metrics") or {}
    shift = (summary.get("sections") or {}).get("goal_shift") or {}
    domains = list(shift.get("by_domain") or {})
    floors = floors_for("evaluate", domains, FIGURES["evaluate"]) if domains else {}
    by_suite = (summary.get("counts") or {}).get("by_suite") or {}
    for name, suite in MIXED_FIGURES.items():
        if by_suite.get(suite, 0) > by_suite.get("goal_shift", 0):
            floors.pop(name, None)
    for surface, figures in EVALUATE_PROACTIVE.items():
        floors |= floors_for(surface, ["sample"], figures)
    return {name: floor for name, floor in floors.items() if name in metrics}


def shift_floors(summary: Mapping[str, Any]) -> dict[str, Floor]:
    """The floors of a goal-shift summary's figures (``simulate``, ``goal-shift``).

    Per figure the highest over the run's tool domains; none for a domain without floors.
    """
    return floors_for("simulate", list(summary.get("by_domain") or {}), FIGURES["simulate"])
