"""A replayed agent plays its whole recording; a replay file cannot be asked for trials it lacks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from todeval.cli.main import main
from todeval.stores.paths import data_dir

RUN40 = data_dir() / "agentchangebench" / "simulations" / "banking_gpt-4.1_run40.json"
pytestmark = pytest.mark.skipif(not RUN40.exists(), reason="AgentChangeBench data not found")
TASKS = "1_goalshift_banking_001,3_banking_insights_hard1_fraud_001_converted"


def _calls(simulations: list[dict[str, Any]]) -> int:
    return sum(
        len(m.get("tool_calls") or [])
        for s in simulations
        for m in s["messages"]
        if m.get("role") == "assistant"
    )


def test_the_local_user_stays_until_the_recorded_agent_turns_run_out(tmp_path: Path) -> None:
    args = ["simulate", "--domain", "banking", "--agent", f"replay:{RUN40}", "--tasks", TASKS]
    assert main([*args, "--out", str(tmp_path), "--checkpoints", ":memory:"]) == 0
    replayed = json.loads((tmp_path / "results.json").read_text())["simulations"]
    recorded = json.loads(RUN40.read_text())["simulations"]
    wanted = [s for s in recorded if s["task_id"] in TASKS.split(",")]
    assert _calls(replayed) == _calls(wanted) > 0  # every recorded call is made again


def test_a_replay_asked_for_more_trials_than_it_holds_fails_before_running(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["simulate", "--domain", "banking", "--agent", f"replay:{RUN40}", "--trials", "2"]
    assert main([*args, "--out", str(tmp_path / "out"), "--checkpoints", ":memory:"]) == 2
    assert "trial 1" in capsys.readouterr().err
    assert not (tmp_path / "out" / "results.json").exists()


def test_list_tasks_prints_every_id_with_its_goals(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "--domain", "airline", "--list-tasks"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 50 and lines[0] == "0\tcancellation -> payment -> refund"
    assert main(["simulate", "--domain", "airline"]) == 2  # no agent, no out, no listing
