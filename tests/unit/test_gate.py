"""Release gates (``--fail-under``): a run under its thresholds, or n/a, exits 3 and says why."""

from __future__ import annotations

from pathlib import Path

import pytest

from todeval.cli.main import main
from todeval.evals.metrics.gate import Figure, GateSpecError, gate_failures, parse_thresholds

SAMPLE = Path("data/samples/enterprise_dialogues.jsonl")


def test_thresholds_parse_and_bad_ones_are_refused() -> None:
    assert parse_thresholds("gsr=0.4, tsr=.5") == {"gsr": 0.4, "tsr": 0.5}
    for bad in ("gsr", "gsr=high", "=0.4"):
        with pytest.raises(GateSpecError):
            parse_thresholds(bad)


def test_a_figure_under_its_threshold_or_missing_fails() -> None:
    figures = {"gsr": Figure(0.41, 0.27, 0.54), "dgcr": Figure(None)}
    assert gate_failures(figures, {"gsr": 0.4}) == []
    [under] = gate_failures(figures, {"gsr": 0.5})
    assert under == "gsr 0.410 [95 % interval 0.270, 0.540] is under 0.5"
    assert "n/a" in gate_failures(figures, {"dgcr": 0.5})[0]
    assert gate_failures(figures, {"dgcr": 0.5, "tsr": 0.1}, allow_na=True) == []


def test_floor_asks_a_figure_to_be_above_what_doing_nothing_reaches() -> None:
    assert parse_thresholds("tsr=floor, gsr=0.2") == {"tsr": "floor", "gsr": 0.2}
    figures = {
        "tsr": Figure(0.0, 0.0, 0.0, floor=0.0),
        "gsr": Figure(0.3, floor=0.05),
        "jga": Figure(0.9),
    }
    [at] = gate_failures(figures, {"tsr": "floor"})
    assert at == "tsr 0.000 [95 % interval 0.000, 0.000] is not above its do-nothing floor 0.000"
    assert gate_failures(figures, {"gsr": "floor"}) == []
    [unmeasured] = gate_failures(figures, {"jga": "floor"})
    assert unmeasured == "jga has no measured do-nothing floor; figures with one: gsr, tsr"
    assert gate_failures(figures, {"jga": "floor"}, allow_na=True) == []


def test_evaluate_exits_3_under_the_gate_and_0_over_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["evaluate", str(SAMPLE), "--limit", "6", "--checkpoints", ":memory:"]
    assert main([*args, "--out", str(tmp_path / "a"), "--fail-under", "gsr=0.99"]) == 3
    assert "gate failed: gsr" in capsys.readouterr().err
    assert main([*args, "--out", str(tmp_path / "b"), "--fail-under", "gsr=0.0"]) == 0
    assert main([*args, "--out", str(tmp_path / "c"), "--fail-under", "gsr=oops"]) == 2


def test_simulate_gates_a_floor_agent(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["simulate", "--domain", "retail", "--agent", "floor:empty", "--tasks", "0,1",
         "--out", str(tmp_path), "--checkpoints", ":memory:", "--fail-under", "tsr=0.5"]
    )  # fmt: skip
    assert code == 3 and "gate failed: tsr" in capsys.readouterr().err


def test_a_floor_agent_is_not_above_its_floor(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        ["simulate", "--domain", "retail", "--agent", "floor:parrot", "--tasks", "0,1",
         "--out", str(tmp_path), "--checkpoints", ":memory:", "--fail-under", "tsr=floor"]
    )  # fmt: skip
    assert code == 3
    assert "gate failed: tsr 0.000" in (err := capsys.readouterr().err)
    assert "is not above its do-nothing floor 0.000" in err


def test_the_pytest_helper_evaluates_and_asserts(tmp_path: Path) -> None:
    import todeval

    summary = todeval.assert_figures([str(SAMPLE)], {"gsr": 0.0}, out=tmp_path / "a", limit=6)
    assert summary["counts"]["records"] == 6
    with pytest.raises(AssertionError, match="gsr .* is under 0.99"):
        todeval.assert_figures([str(SAMPLE)], {"gsr": 0.99}, out=tmp_path / "b", limit=6)


def test_the_documented_api_call_reproduces_the_cli(tmp_path: Path) -> None:
    import json

    import todeval

    api = todeval.evaluate([str(SAMPLE)], out=str(tmp_path / "api"), checkpoints=":memory:")
    assert main(["evaluate", str(SAMPLE), "--out", str(tmp_path / "cli"),
                 "--checkpoints", ":memory:"]) == 0  # fmt: skip
    cli = json.loads((tmp_path / "cli" / "summary.json").read_text())
    assert api["metrics"] == cli["metrics"] and api["counts"]["paused_records"] == 0


def test_figures_are_only_computed_for_a_gate() -> None:
    import argparse

    from todeval.cli.common import GATE_FAILED, gate

    def figures() -> dict[str, Figure]:
        raise AssertionError("no thresholds: the figures are not read back")

    assert gate(argparse.Namespace(fail_under=None), figures, 0) == 0
    gated = argparse.Namespace(fail_under={"gsr": 0.5}, allow_na=False)
    assert gate(gated, lambda: {"gsr": Figure(0.4)}, 0) == GATE_FAILED
