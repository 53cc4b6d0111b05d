"""``todeval proactive plan|guide``: the files each writes, and its usage errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from todeval.cli.main import main
from todeval.stores.paths import PROJECT_ROOT

DATA = PROJECT_ROOT / "data" / "samples" / "proactive" / "persuasion" / "eval.json"


def test_plan_writes_results_summary_and_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        ["proactive", "plan", str(DATA), "--out", str(tmp_path), "--checkpoints", ":memory:"]
    )
    assert code == 0 and "target_planning: score" in capsys.readouterr().out
    summary = json.loads((tmp_path / "summary.json").read_text())
    lines = (tmp_path / "results.jsonl").read_text().splitlines()
    assert len(lines) == summary["counts"]["runs"] == summary["counts"]["environments"]
    assert summary["task"] == "target_planning" and summary["by"]["domain"].keys() == {"persuasion"}
    assert "ProactiveEval target planning" in (tmp_path / "report.html").read_text()


def test_guide_runs_the_chosen_tiers_and_runs(tmp_path: Path) -> None:
    args = ["proactive", "guide", str(DATA), "--out", str(tmp_path), "--checkpoints", ":memory:"]
    assert main([*args, "--agreeableness", "high,low", "--runs", "2", "--max-turns", "4"]) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    rows = [json.loads(x) for x in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert len(rows) == summary["counts"]["environments"] * 2 * 2
    assert {r["agreeableness"] for r in rows} == {"high", "low"}
    assert max(r["turns"] for r in rows) <= 4
    assert summary["run"]["user_simulator"] == "local"
    report = (tmp_path / "report.html").read_text()
    assert "By agreeableness" in report and "Why the dialogues stopped" in report


def test_an_unknown_tier_is_a_usage_error(tmp_path: Path) -> None:
    args = ["proactive", "guide", str(DATA), "--out", str(tmp_path), "--agreeableness", "rude"]
    assert main(args) == 2
