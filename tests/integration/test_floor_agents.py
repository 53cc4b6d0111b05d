"""Where each floor agent's headline figures stand (issue 29): at the floor, or a marked gap.

Every floor agent runs live through the CLI as ``scripts/floor_agents.py`` runs it (``todeval
simulate --user local`` on each tool domain's first :data:`TASKS` tasks, one trial, then
``todeval evaluate``; ``todeval proactive guide|plan`` on the bundled sample, one run), and each
headline figure is held to issue 29's target: a rate at most 0.10 or n/a with a reason, a 1-10
score at most 3.

Today's judges let some floor agents pass; exactly those cases are in :data:`GAPS`, marked
``xfail(strict=True)`` with the judge at fault. The day a judge is fixed its cases pass, the
strict mark turns that into a failure, and the mark must go: the figure is then pinned at its
floor.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scripts.floor_agents import (
    GUIDE_FIGURES,
    PLAN_FIGURES,
    RECORDED,
    SAMPLE,
    TOOL_FIGURES,
    Figure,
    at_floor,
    first_task_ids,
    main,
    run_guide_agent,
    run_plan_agent,
    run_tool_agent,
    shipped_file,
)
from todeval.nodes.judges.floors import shipped_floors
from todeval.nodes.proactive.floor_agents import GUIDE_FLOOR_SPECS, PLAN_FLOOR_SPECS
from todeval.nodes.simulation.agents.floor import FLOOR_AGENTS
from todeval.nodes.simulation.domains import DOMAINS

pytestmark = pytest.mark.integration

TASKS = 10
"""Tasks per tool domain (the first ones of its task file)."""

# (surface, agent, place, figure) -> the judge that lets the floor agent pass today (a reason).
# Empty since issue 29's round 3: every floor agent is at its floor on every figure.
GAPS: dict[tuple[str, str, str, str], str] = {}


def _cases() -> list[Any]:
    cases = [
        ("tool", agent, domain, name)
        for agent in FLOOR_AGENTS
        for domain in DOMAINS
        for name in TOOL_FIGURES
    ]
    cases += [
        ("guide", agent, "sample", name) for agent in GUIDE_FLOOR_SPECS for name in GUIDE_FIGURES
    ]
    cases += [
        ("plan", agent, "sample", name) for agent in PLAN_FLOOR_SPECS for name in PLAN_FIGURES
    ]
    return [
        pytest.param(
            *case,
            id="/".join(case),
            marks=[pytest.mark.xfail(strict=True, reason=GAPS[case])] if case in GAPS else [],
        )
        for case in cases
    ]


Runs = Callable[[str, str, str], tuple[dict[str, Figure], Path]]


@pytest.fixture(scope="module")
def floor_run(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    """Each (surface, agent, place) run once for the module: its figures and its folder."""
    root = tmp_path_factory.mktemp("floors")
    done: dict[tuple[str, str, str], tuple[dict[str, Figure], Path]] = {}

    def run(surface: str, agent: str, place: str) -> tuple[dict[str, Figure], Path]:
        key = (surface, agent, place)
        if key not in done:
            out = root / surface / agent / place
            if surface == "tool":
                ids = first_task_ids(place, TASKS)
                figures = run_tool_agent(f"floor:{agent}", place, ids, out)
            elif surface == "guide":
                figures = run_guide_agent(GUIDE_FLOOR_SPECS[agent], SAMPLE, out, runs=1)
            else:
                figures = run_plan_agent(PLAN_FLOOR_SPECS[agent], SAMPLE, out, runs=1)
            done[key] = (figures, out)
        return done[key]

    return run


@pytest.mark.parametrize(("surface", "agent", "place", "name"), _cases())
def test_each_headline_figure_of_each_floor_agent_is_at_its_floor(
    floor_run: Runs, surface: str, agent: str, place: str, name: str
) -> None:
    figures, _ = floor_run(surface, agent, place)
    found = figures[name]
    assert at_floor(name, found), f"{agent} on {place}: {name} = {found['value']}"


@pytest.mark.parametrize("domain", list(DOMAINS))
@pytest.mark.parametrize("agent", list(FLOOR_AGENTS))
def test_floor_agents_run_every_conversation_through_the_harness(
    floor_run: Runs, agent: str, domain: str
) -> None:
    _, out = floor_run("tool", agent, domain)
    summary = json.loads((out / "simulate" / "summary.json").read_text())
    counts = summary["simulation"]["counts"]
    assert counts["conversations"] == TASKS
    assert counts["failed_conversations"] == 0
    results = json.loads((out / "simulate" / "results.json").read_text())
    reasons = {s["termination_reason"] for s in results["simulations"]}
    assert reasons <= {"user_stop", "max_steps"}  # never an agent error: the agents never break
    evaluated = json.loads((out / "evaluate" / "summary.json").read_text())
    assert evaluated["counts"]["records"] == TASKS
    assert evaluated["counts"]["failed_records"] == evaluated["counts"]["skipped_records"] == 0


def test_the_shipped_floors_are_what_the_floor_agents_reach_today(floor_run: Runs) -> None:
    """The floors every report shows cannot drift from the judges (rewrite: ``--write``)."""
    tool = {
        f"floor:{agent}": {domain: floor_run("tool", agent, domain)[0] for domain in DOMAINS}
        for agent in FLOOR_AGENTS
    }
    proactive = {
        f"{surface}:{agent}": {"sample": floor_run(surface, agent, "sample")[0]}
        for surface, agents in (("guide", GUIDE_FLOOR_SPECS), ("plan", PLAN_FLOOR_SPECS))
        for agent in agents
    }
    settings = {"tasks_per_domain": TASKS, "domains": list(DOMAINS), "trials": 1, "guide_runs": 1}
    recomputed = shipped_file({"settings": settings, "tool": tool, "proactive": proactive})
    shipped = shipped_floors()
    assert recomputed["settings"]["basis"] == shipped["settings"]["basis"]
    for surface, by_place in recomputed["floors"].items():
        for place, figures in by_place.items():
            for name, floor in figures.items():
                found = shipped["floors"][surface][place][name]
                where = f"{surface}/{place}/{name}: run python -m scripts.floor_agents --write"
                if floor["value"] is None:
                    assert found["value"] is None, where
                else:
                    assert found["value"] == pytest.approx(floor["value"], abs=1e-6), where


def test_the_runner_writes_the_floor_table_beside_the_recorded_run(tmp_path: Path) -> None:
    assert main(["--out", str(tmp_path), "--tasks", "2", "--domains", "banking"]) == 0
    floors = json.loads((tmp_path / "floors.json").read_text())
    assert set(floors["tool"]) == {f"floor:{a}" for a in FLOOR_AGENTS} | {RECORDED}
    assert set(floors["tool"]["floor:done"]) == {"banking"}
    recorded = floors["tool"][RECORDED]["banking"]
    # 0.483 before the action channel gave made-up arguments nothing (0.448: issue 29 item 2)
    assert recorded["TSR (evaluate)"]["value"] == pytest.approx(0.448, abs=1e-3)
    assert {f"guide:{a}" for a in GUIDE_FLOOR_SPECS} <= set(floors["proactive"])
    assert floors["settings"]["tasks_per_domain"] == 2
    table = (tmp_path / "floors.md").read_text()
    assert "| floor:parrot | banking |" in table and RECORDED in table
