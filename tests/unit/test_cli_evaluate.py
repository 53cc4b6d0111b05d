"""``todeval evaluate`` as a user runs it: every suite that applies, one report, resumable."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from todeval.cli.main import main
from todeval.evals.metrics.record_metrics import METRICS


def _evaluate(inputs: list[Path], out: Path, config: Path, *extra: str) -> int:
    checkpoints = out.parent / "checkpoints.sqlite"
    return main(["evaluate", *map(str, inputs), "--config", str(config),
                 "--checkpoints", str(checkpoints), "--out", str(out), *extra])  # fmt: skip


def _lines(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def test_every_applicable_suite_runs_and_the_figures_agree(
    inputs: list[Path], config: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    assert _evaluate(inputs, out, config) == 0
    lines = _lines(out)
    # Input order; the broken dialogue is skipped, named by its id and field.
    assert [line["record_id"] for line in lines] == ["d1", "d2", "c1", "e1", "e2"]
    by_id = {line["record_id"]: line for line in lines}
    assert by_id["d1"]["suites"] == ["goal_success", "goal_tracking"]
    assert by_id["c1"]["suites"] == ["goal_success", "goal_tracking", "goal_shift"]
    assert by_id["e1"]["suites"] == ["goal_tracking", "memory"]  # the item awaits the reply: no GSR
    assert all(line["status"] == "done" for line in lines)
    summary = json.loads((out / "summary.json").read_text())
    skipped = {row["dialogue_id"]: row["field"] for row in summary["skipped"]}
    assert set(skipped) == {"broken", "bad"}  # the bench's u2 has a broken item too
    assert "user_msg" in skipped["broken"]
    assert set(summary["sections"]) == {"goal_success", "goal_tracking", "goal_shift", "memory"}
    assert summary["counts"]["by_suite"] == {
        "goal_success": 3,
        "goal_tracking": 5,
        "goal_shift": 1,
        "memory": 2,
    }
    # The per-record parts pool to each subsystem's own figure.
    sections, metrics = summary["sections"], summary["metrics"]
    pairs = [
        ("goal_success", "gsr"),
        ("goal_tracking", "dgcr"),
        ("goal_shift", "tsr"),
        ("goal_shift", "tool_correctness"),
        ("goal_shift", "tcrr"),
        ("memory", "recall_at_5"),
        ("memory", "jga"),
        ("memory", "dte"),
    ]
    for suite, name in pairs:  # a figure nobody could compute is absent, and None in its section
        assert metrics.get(name) == pytest.approx(sections[suite][name], abs=1e-4), name
    assert metrics["tool_correctness"] == 1.0 and metrics["jga"] > 0
    assert set(metrics) <= set(METRICS)
    gsr_goals = [
        g
        for line in lines
        for g in line.get("goal_success", {}).get("goals", [])
        if g["success"] is not None
    ]
    assert metrics["gsr"] == pytest.approx(sum(g["success"] for g in gsr_goals) / len(gsr_goals))
    report = (out / "report.html").read_text()
    for title in ("All figures", "Goal-shift robustness", "Memory and slot repair", "Records"):
        assert title in report
    # Drill-down: d2's turns with the voted quality of its complaint-answered first turn.
    d2 = report[report.index('<details id="records-d2') :]
    d2 = d2[: d2.index("</details>")]
    assert "How do I reset my VPN password?" in d2
    first_vote = by_id["d2"]["goal_success"]["goals"][0]["turns"][0]["quality"]
    assert f"<td>{first_vote}</td>" in d2
    printed = capsys.readouterr().out
    assert "evaluated 5 records" in printed and "2 unreadable records skipped" in printed


def test_a_rerun_reads_every_thread_back_without_duplicates(
    inputs: list[Path], config: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    assert _evaluate(inputs, out, config) == 0
    first = _lines(out)
    assert _evaluate(inputs, out, config) == 0
    again = _lines(out)
    assert [line["record_id"] for line in again] == [line["record_id"] for line in first]
    assert all(line["resumed"] for line in again) and not any(line["resumed"] for line in first)
    assert [line["metrics"] for line in again] == [line["metrics"] for line in first]


def test_one_suite_only(inputs: list[Path], config: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert _evaluate(inputs[1:2], out, config, "--suite", "shift") == 0
    (line,) = _lines(out)
    assert line["suites"] == ["goal_shift"] and "gsr" not in line
    summary = json.loads((out / "summary.json").read_text())
    assert set(summary["sections"]) == {"goal_shift"}


def test_bad_options_are_usage_errors(
    inputs: list[Path], config: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    assert _evaluate(inputs, out, config, "--suite", "gsr,nope") == 2
    assert _evaluate(inputs, out, config, "--judge", "reader") == 2
    assert _evaluate(inputs, out, config, "--escalate") == 2
    assert _evaluate(inputs, out, config, "--judge", "segmentation=nosuch:provider:x") == 2
    errors = capsys.readouterr().err
    assert "--suite" in errors and "--judge 'reader'" in errors
    assert "--escalate needs --server" in errors
    assert not (out / "results.jsonl").exists()


def test_the_same_figures_as_a_langsmith_experiment_offline(
    inputs: list[Path], config: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    assert _evaluate(inputs[:1], out, config, "--suite", "gsr") == 0
    gsr = json.loads((out / "summary.json").read_text())["metrics"]["gsr"]
    capsys.readouterr()
    code = main(["experiment", str(inputs[0]), "--config", str(config), "--suite", "gsr"])
    printed = capsys.readouterr().out
    assert code == 0 and "offline, not uploaded" in printed
    (line,) = [row for row in printed.splitlines() if row.startswith("Goal Success Rate")]
    assert float(line.split()[-1]) == pytest.approx(gsr, abs=5e-4)
