"""Every figure stands beside the floor do-nothing agents reach (issue 29 item 1).

The shipped floors (``nodes/judges/floors.json``, recomputed by
``tests/integration/test_floor_agents.py``) reach each summary that has such a figure, its
report, the command's last line and ``compare``; records no floor was measured for get none.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from todeval.cli.main import main
from todeval.nodes.judges.floors import FIGURES, floors_for, highest, shipped_floors
from todeval.stores.paths import PROJECT_ROOT

SAMPLES = PROJECT_ROOT / "data" / "samples"


def _figure(value: float | None, reason: str | None = None) -> dict[str, Any]:
    return {"value": value, "reason": reason}


def test_the_floor_is_the_highest_floor_agent_and_na_keeps_its_reason() -> None:
    floors = highest(
        {
            "floor:empty": {"GSR": _figure(None, "no goals"), "TSR": _figure(0.0)},
            "floor:parrot": {"GSR": _figure(0.04), "TSR": _figure(0.0)},
            "floor:done": {"GSR": _figure(0.02), "TUE": _figure(None, "no tool calls")},
        }
    )
    assert floors["GSR"] == {"value": 0.04, "agent": "floor:parrot", "reason": None}
    assert floors["TSR"]["agent"] == "floor:empty"  # a tie keeps the first agent
    assert floors["TUE"] == {"value": None, "agent": None, "reason": "no tool calls"}


def test_a_run_over_several_domains_gets_the_highest_floor_of_them(tmp_path: Path) -> None:
    path = tmp_path / "floors.json"
    path.write_text(
        json.dumps(
            {
                "settings": {"basis": "two tasks"},
                "floors": {
                    "evaluate": {
                        "banking": {"GSR": _figure(0.02) | {"agent": "floor:parrot"}},
                        "retail": {"GSR": _figure(0.07) | {"agent": "floor:done"}},
                    }
                },
            }
        )
    )
    found = floors_for("evaluate", ["banking", "retail"], {"gsr": "GSR", "dgcr": "dGCR"}, path)
    assert found == {
        "gsr": {
            "value": 0.07, "agent": "floor:done", "reason": None, "place": "retail",
            "basis": "two tasks",
        }
    }  # fmt: skip
    assert floors_for("evaluate", ["airline"], {"gsr": "GSR"}, path) == {}


def test_the_shipped_file_has_every_figure_each_surface_reports() -> None:
    shipped = shipped_floors()
    assert shipped["settings"]["basis"]
    for surface, figures in FIGURES.items():
        places = shipped["floors"][surface]
        assert places, surface
        for place, found in places.items():
            assert set(found) == set(figures.values()), (surface, place)
            for floor in found.values():
                assert floor["value"] is not None or floor["reason"], (surface, place)


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two tasks of banking with a parrot, then evaluate on its results, twice."""
    root = tmp_path_factory.mktemp("floors")
    ids = "1_goalshift_banking_001,2_banking_billpay_easy2_statements_001_converted"
    folders: dict[str, Path] = {}
    for name, agent in (("a", "floor:parrot"), ("b", "floor:done")):
        simulated, evaluated = root / f"sim-{name}", root / f"eval-{name}"
        memory = ["--checkpoints", ":memory:"]
        simulate = ["simulate", "--domain", "banking", "--agent", agent, "--user", "local"]
        assert main([*simulate, "--tasks", ids, "--out", str(simulated), *memory]) == 0
        results = str(simulated / "results.json")
        assert main(["evaluate", results, "--out", str(evaluated), *memory]) == 0
        folders[f"sim-{name}"], folders[f"eval-{name}"] = simulated, evaluated
    return folders


def _summary(folder: Path) -> dict[str, Any]:
    found: dict[str, Any] = json.loads((folder / "summary.json").read_text())
    return found


def test_a_live_run_reports_its_domains_floors(live: dict[str, Path]) -> None:
    summary = _summary(live["sim-a"])
    shipped = shipped_floors()["floors"]["simulate"]["banking"]
    assert set(summary["floors"]) == set(FIGURES["simulate"])
    assert summary["floors"]["tsr"]["value"] == shipped["TSR (simulate)"]["value"]
    assert summary["floors"]["tsr"]["place"] == "banking"
    report = (live["sim-a"] / "report.html").read_text()
    assert "Against the do-nothing floor" in report and "TSR do-nothing floor" in report


def test_a_recorded_run_scored_by_goal_shift_reports_its_floors(tmp_path: Path) -> None:
    out = tmp_path / "scored"
    transcripts = str(SAMPLES / "agent_transcripts.jsonl")
    assert main(["goal-shift", transcripts, "--out", str(out), "--checkpoints", ":memory:"]) == 0
    summary = _summary(out)
    measured = set(summary["by_domain"]) & set(shipped_floors()["floors"]["simulate"])
    assert measured  # the sample's transcripts are of a live tool domain
    assert summary["floors"]["tsr"]["place"] in measured
    assert "Against the do-nothing floor" in (out / "report.html").read_text()


def test_evaluate_on_agent_transcripts_puts_the_floor_beside_each_figure(
    live: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    summary = _summary(live["eval-a"])
    shipped = shipped_floors()["floors"]["evaluate"]["banking"]
    assert summary["floors"]["gsr"]["value"] == shipped["GSR"]["value"]
    assert summary["floors"]["tsr"]["value"] == shipped["TSR (evaluate)"]["value"]
    assert set(summary["floors"]) <= set(summary["metrics"])  # only figures the run has
    assert "<th>do-nothing floor</th>" in (live["eval-a"] / "report.html").read_text()
    assert main(["compare", str(live["eval-a"]), str(live["eval-b"])]) == 0
    printed = capsys.readouterr().out
    assert "do-nothing floor" in printed.splitlines()[0]
    compared = json.loads((live["eval-b"] / "compare" / "compare.json").read_text())
    assert compared["metrics"]["gsr"]["floor"]["value"] == shipped["GSR"]["value"]
    assert "do-nothing floor" in (live["eval-b"] / "compare" / "compare.html").read_text()


def test_a_figure_mixing_agent_transcripts_with_other_logs_gets_no_floor(
    live: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "mixed"
    inputs = [str(live["sim-a"] / "results.json"), str(SAMPLES / "enterprise_dialogues.jsonl")]
    assert main(["evaluate", *inputs, "--out", str(out), "--checkpoints", ":memory:"]) == 0
    summary = _summary(out)
    assert "gsr" in summary["metrics"] and "gsr" not in summary["floors"]
    assert summary["floors"]["tsr"]["place"] == "banking"  # TSR counts agent transcripts only


def test_logs_of_no_measured_domain_get_no_floor(tmp_path: Path) -> None:
    out = tmp_path / "run"
    sample = SAMPLES / "enterprise_dialogues.jsonl"
    assert main(["evaluate", str(sample), "--out", str(out), "--checkpoints", ":memory:"]) == 0
    assert _summary(out)["floors"] == {}
    assert "do-nothing floor" not in (out / "report.html").read_text()


def test_a_proactive_run_reports_the_recited_plans_floor(tmp_path: Path) -> None:
    out = tmp_path / "guide"
    data = SAMPLES / "proactive"
    argv = ["proactive", "guide", str(data), "--runs", "1", "--out", str(out)]
    assert main([*argv, "--checkpoints", ":memory:"]) == 0
    floors = _summary(out)["floors"]
    shipped = shipped_floors()["floors"]["proactive_guide"]["sample"]
    assert floors["score"]["value"] == shipped["guidance score"]["value"] <= 3.0
    assert "Do-nothing floor" in (out / "report.html").read_text()
