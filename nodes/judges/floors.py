"""Floors: where each headline figure stands for an agent that does nothing useful (issue 29).

A figure means little without the value an empty, parroting or success-claiming agent gets on
the same judges. ``python -m scripts.floor_agents --write`` runs every floor agent live
(``floor:<name>`` on each tool domain's first tasks with the local user, the ProactiveEval
floor agents on the bundled sample) and writes, per figure and place, the highest value any of
them reached into ``floors.json`` beside this module. Each summary that has such a figure
carries its floor under ``floors`` (:func:`floors_for`), and the reports and ``compare`` show
it beside the figure. ``tests/integration/test_floor_agents.py`` recomputes the file from the
shipped judges and fails when it drifts, as the validity cards' test does.

A floor is a reference point, not a bound: it was measured on the first tasks of each domain
(``settings`` in the file), and a run on other tasks or with another user simulator may place
its do-nothing agents a little differently.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

FLOORS_PATH = Path(__file__).with_name("floors.json")
"""The shipped floors (written by ``scripts/floor_agents.py --write``)."""

FIGURES: dict[str, dict[str, str]] = {
    "simulate": {
        "tsr": "TSR (simulate)",
        "communicate_info": "communicate_info",
        "action": "action",
        "nl_assertion": "nl_assertion",
        "tue": "TUE",
        "gsrt_recovery": "GSRT recovery",
        "pass_hat_k": "pass^k",
    },
    "evaluate": {"gsr": "GSR", "dgcr": "dGCR", "tsr": "TSR (evaluate)"},
    "proactive_guide": {"score": "guidance score", "reached": "guidance reached"},
    "proactive_plan": {"score": "planning score"},
}
"""Per surface (the command whose summary reports the figure: the floor file's top-level keys),
the summary's figure key -> the figure's name in the floor file."""

EVALUATE_PROACTIVE = {
    "proactive_guide": {"proactive_guidance_score": "guidance score"},
    "proactive_plan": {"proactive_plan_score": "planning score"},
}
"""``evaluate``'s ProactiveEval figures -> their floors (measured by ``todeval proactive``)."""

Floor = dict[str, Any]
"""``{"value": float | None, "agent": str | None, "reason": str | None}`` in the file; a run's
floors add ``place`` (the domain) and ``basis`` (how it was measured)."""


@cache
def _read(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    found: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return found


def shipped_floors(path: Path = FLOORS_PATH) -> dict[str, Any]:
    """The floor file: ``{"settings": ..., "floors": {surface: {place: {figure: floor}}}}``."""
    return dict(_read(path))


def highest(by_agent: Mapping[str, Mapping[str, Any]]) -> dict[str, Floor]:
    """Per figure, the highest value of any floor agent (``by_agent``: agent -> figures).

    Each figure is ``{"value", "reason"}``; a figure no agent has a value for keeps the first
    reason given.
    """
    floors: dict[str, Floor] = {}
    for agent, figures in by_agent.items():
        for name, found in figures.items():
            best = floors.get(name)
            value = found.get("value")
            if best is None or (
                value is not None and (best["value"] is None or value > best["value"])
            ):
                floors[name] = {
                    "value": value,
                    "agent": agent if value is not None else None,
                    "reason": None if value is not None else found.get("reason"),
                }
    return floors


def floors_for(
    surface: str, places: Iterable[str], figures: Mapping[str, str], path: Path = FLOORS_PATH
) -> dict[str, Floor]:
    """The floors of a run's figures: per figure the highest over its ``places``.

    Args:
        surface: A key of :data:`FIGURES` (the floor file's top-level keys).
        places: The run's tool domains (or ``"sample"`` for ProactiveEval).
        figures: The summary's figure key -> the figure's name in the floor file.
        path: The floor file (the shipped one unless a test gives another).

    Returns:
        ``{figure key: floor}`` for the figures the file has at any of the places (with
        ``basis``: how the floor was measured); empty when there is none.
    """
    shipped = _read(path)
    by_place = (shipped.get("floors") or {}).get(surface) or {}
    basis = str((shipped.get("settings") or {}).get("basis", "the floor run"))
    found: dict[str, Floor] = {}
    for key, name in figures.items():
        candidates = [
            dict(by_place[place][name], place=place)
            for place in places
            if name in (by_place.get(place) or {})
        ]
        if not candidates:
            continue
        valued = [c for c in candidates if c.get("value") is not None]
        best = max(valued, key=lambda c: c["value"]) if valued else candidates[0]
        found[key] = best | {"basis": basis}
    return found
