"""``todeval compare`` as a user runs it: two evaluate folders in, a table and compare.* out."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

from todeval.cli import compare
from todeval.cli import main as cli_main


def todeval(*argv: str) -> int:
    """``todeval compare ...`` through the real entry point (exit codes, error printing).

    Until ``cli/main.py`` registers ``compare``, its parser gets the subcommand added here.
    """
    original = cli_main.build_parser

    def with_compare() -> argparse.ArgumentParser:
        parser = original()
        commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        if "compare" not in commands.choices:
            compare.add_parser(commands)
        return parser

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cli_main, "build_parser", with_compare)
        return cli_main.main(["compare", *argv])


def gsr(num: int, den: int) -> dict[str, Any]:
    return {"gsr": {"num": num, "den": den}}


def line(record_id: str, metrics: dict[str, Any], status: str = "done") -> dict[str, Any]:
    return {
        "record_id": record_id,
        "kind": "dialogue",
        "suites": ["goal_success"],
        "thread_id": f"evaluate:{record_id}",
        "status": status,
        "error": None if status == "done" else "boom",
        "metrics": metrics,
        "goal_success": {"goals": []},
    }


def write_run(
    folder: Path, lines: list[dict[str, Any]], summary: dict[str, Any] | None = None
) -> Path:
    folder.mkdir(parents=True)
    text = "".join(json.dumps(item) + "\n" for item in lines)
    (folder / "results.jsonl").write_text(text)
    if summary is not None:
        (folder / "summary.json").write_text(json.dumps(summary))
    return folder


def two_runs(tmp_path: Path) -> tuple[Path, Path]:
    """B improves GSR everywhere, most on r3 (0/4 -> 4/4); TCRR (lower is better) rises on r1."""
    run_a = write_run(
        tmp_path / "a",
        [
            line("r1", gsr(1, 4) | {"tcrr": {"num": 0, "den": 5}}),
            line("r2", gsr(2, 4)),
            line("r3", gsr(0, 4)),
            line("r4", gsr(1, 2)),
            line("r5", gsr(3, 4)),
            line("only-a", gsr(1, 1)),
        ],
        summary={
            "judges": {"goal_success": {"turn_quality": ["local"], "segmentation": "local"}},
            "run": {
                "context": {
                    "judges": {"turn_quality": ["local"]},
                    "settings": {"goal_tracking": {"tau": 0.75}, "memory": {"alpha": 0.5}},
                }
            },
        },
    )
    run_b = write_run(
        tmp_path / "b",
        [
            line("r2", gsr(3, 4)),
            line("r1", gsr(2, 4) | {"tcrr": {"num": 2, "den": 5}}),
            line("r3", gsr(4, 4)),
            line("r4", gsr(2, 2)),
            line("r5", {}, status="failed"),
            line("only-b", gsr(0, 3)),
        ],
    )
    return run_a, run_b


def test_compare_prints_the_table_and_writes_json_and_html(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_a, run_b = two_runs(tmp_path)
    assert todeval(str(run_a), str(run_b), "--top", "3", "--resamples", "400") == 0

    out = run_b / "compare"  # the default --out
    result = json.loads((out / "compare.json").read_text())
    figures = result["metrics"]["gsr"]
    assert figures["label"] == "Goal Success Rate"
    # Each run over all its records: A 8/19, B 11/17 (r5 failed in B, so B has no part for it).
    assert figures["a"]["value"] == pytest.approx(8 / 19) and figures["a"]["n"] == 6
    assert figures["b"]["value"] == pytest.approx(11 / 17) and figures["b"]["n"] == 5
    # The difference pairs r1-r4 only: A 4/14, B 11/14.
    diff = figures["difference"]
    assert (diff["a"]["value"], diff["b"]["value"]) == pytest.approx((4 / 14, 11 / 14))
    assert diff["n"] == 4 and diff["delta"] == pytest.approx(7 / 14)
    assert diff["low"] <= diff["delta"] <= diff["high"]
    assert figures["scored_by_one_run_only"] == {"a": 1, "b": 0}
    changed = [c["record_id"] for c in figures["most_changed"]]
    assert changed[0] == "r3" and len(changed) == 3 and set(changed) <= {"r1", "r2", "r3", "r4"}
    assert figures["most_changed"][0]["change"] == pytest.approx(1.0)
    assert result["records"] == {"both": 5, "only_a": ["only-a"], "only_b": ["only-b"]}
    assert result["metrics"]["tcrr"]["difference"]["delta"] == pytest.approx(0.4)
    assert result["runs"]["a"]["judges"]["goal_success"]["turn_quality"] == ["local"]
    assert result["runs"]["b"]["judges"] is None
    assert result["runs"]["b"]["summary_error"] == "no summary.json"
    assert result["runs"]["b"]["status"] == {"done": 5, "failed": 1}

    printed = capsys.readouterr().out
    gsr_row = next(row for row in printed.splitlines() if row.startswith("Goal Success Rate"))
    assert "0.421 [" in gsr_row and "0.647 [" in gsr_row and "+0.500 [" in gsr_row
    assert gsr_row.rstrip().endswith("6/5/4")
    assert "5 records in both runs, 1 only in A, 1 only in B" in printed

    html = (out / "compare.html").read_text()
    assert "<script" not in html and "Goal Success Rate" in html and "TCRR" in html
    gsr_changes = html[html.index("<h3>Goal Success Rate</h3>") :]
    assert gsr_changes.index(">r3<") < gsr_changes.index(">r1<")
    assert "+50.0 pp" in html  # the GSR difference in percentage points
    assert "only-a" in html and "only-b" in html
    assert "judges.goal_success.turn_quality" in html and "no summary.json" in html


def test_direction_of_a_metric_decides_better_or_worse(tmp_path: Path) -> None:
    lines_a = [line(f"r{i}", gsr(1, 4) | {"tcrr": {"num": 0, "den": 4}}) for i in range(40)]
    lines_b = [line(f"r{i}", gsr(3, 4) | {"tcrr": {"num": 2, "den": 4}}) for i in range(40)]

    def summary(teachers: list[str], alpha: float) -> dict[str, Any]:
        settings = {"goal_tracking": {"tau": 0.75}, "memory": {"alpha": alpha}}
        context = {"judges": {"turn_quality": teachers}, "settings": settings}
        return {"judges": {"goal_success": {"turn_quality": teachers}}, "run": {"context": context}}

    run_a = write_run(tmp_path / "a", lines_a, summary(["local"], 0.5))
    run_b = write_run(tmp_path / "b", lines_b, summary(["openai:gpt-4o", "local"], 0.5))
    out = tmp_path / "cmp"
    assert todeval(str(run_a), str(run_b), "--out", str(out)) == 0
    metrics = json.loads((out / "compare.json").read_text())["metrics"]
    assert metrics["gsr"]["change"] == "better"
    assert metrics["tcrr"]["change"] == "worse"  # more redundant calls
    html = (out / "compare.html").read_text()
    judges = html[html.index('id="compare-judges"') :]
    assert "judges.goal_success.turn_quality" in judges and "openai:gpt-4o" in judges
    # The differing setting is listed and marked; the ones both runs share are not.
    assert "turn_quality <span" in judges and "alpha" not in judges and "tau" not in judges


def test_a_run_compared_with_itself_shows_no_change(tmp_path: Path) -> None:
    run_a, _ = two_runs(tmp_path)
    out = tmp_path / "self"
    assert todeval(str(run_a), str(run_a), "--out", str(out), "--seed", "3") == 0
    result = json.loads((out / "compare.json").read_text())
    for figures in result["metrics"].values():
        assert figures["difference"]["delta"] == 0.0
        assert figures["difference"]["low"] <= 0.0 <= figures["difference"]["high"]
        assert figures["change"] == "no clear change" and figures["most_changed"] == []
    html = (out / "compare.html").read_text()
    assert "judges.goal_success.turn_quality" in html and "differs" not in html


def test_same_seed_gives_the_same_intervals(tmp_path: Path) -> None:
    run_a, run_b = two_runs(tmp_path)
    for name in ("one", "two"):
        assert todeval(str(run_a), str(run_b), "--out", str(tmp_path / name), "--seed", "5") == 0
    one, two = (json.loads((tmp_path / n / "compare.json").read_text()) for n in ("one", "two"))
    assert one["metrics"] == two["metrics"]


@pytest.mark.parametrize(
    ("bad_line", "message"),
    [
        ("{not json", "not JSON"),
        ('["r9"]', "expected a JSON object"),
        ('{"metrics": {}}', "record_id"),
        ('{"record_id": "r9", "metrics": {"gsr": {"num": 1, "den": "4"}}}', "metrics.gsr"),
        ('{"record_id": "r9", "metrics": [1]}', "metrics"),
        ('{"record_id": "r1", "metrics": {}}', "repeats line 2"),
    ],
)
def test_a_malformed_line_is_exit_2_naming_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], bad_line: str, message: str
) -> None:
    run_a, run_b = two_runs(tmp_path)
    results = run_b / "results.jsonl"
    lines = results.read_text().splitlines()
    lines.insert(2, bad_line)
    results.write_text("\n".join(lines) + "\n")
    assert todeval(str(run_a), str(run_b)) == 2
    error = capsys.readouterr().err
    assert f"{results}:3" in error and message in error
    assert "Traceback" not in error
    assert not (run_b / "compare").exists()


def test_a_missing_or_non_run_folder_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_a, _ = two_runs(tmp_path)
    assert todeval(str(run_a), str(tmp_path / "nowhere")) == 2
    assert "nowhere" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert todeval(str(tmp_path / "empty"), str(run_a)) == 2
    assert "no results.jsonl" in capsys.readouterr().err


def test_an_unreadable_summary_is_noted_not_fatal(tmp_path: Path) -> None:
    run_a, run_b = two_runs(tmp_path)
    (run_b / "summary.json").write_text("{truncated")
    args = argparse.Namespace(
        dir_a=str(run_a), dir_b=str(run_b), out=None, resamples=50, seed=0, top=2
    )
    assert compare.run(args) == 0
    result = json.loads((run_b / "compare" / "compare.json").read_text())
    assert result["runs"]["b"]["summary_error"].startswith("summary.json unreadable")


def test_runs_without_a_shared_record_exit_1(tmp_path: Path) -> None:
    run_a = write_run(tmp_path / "a", [line("x", gsr(1, 2))])
    run_b = write_run(tmp_path / "b", [line("y", gsr(1, 2))])
    assert todeval(str(run_a), str(run_b)) == 1
    result = json.loads((run_b / "compare" / "compare.json").read_text())
    assert result["metrics"]["gsr"]["difference"]["delta"] is None
    assert result["metrics"]["gsr"]["change"] == "no clear change"


def test_bad_options_are_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_a, run_b = two_runs(tmp_path)
    assert cli_main.main(["compare", str(run_a), str(run_b), "--resamples", "0"]) == 2
    assert "--resamples: expected 1 or more, got 0" in capsys.readouterr().err


def test_a_small_difference_is_within_noise_and_differing_judges_are_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Two runs of one agent: 40 records, a few flipped either way (the same agent, rerun).
    flips = {3: (0, 1), 11: (1, 0), 20: (0, 1)}
    a = [line(f"r{i}", gsr(i % 2, 1)) for i in range(40)]
    b = [line(f"r{i}", gsr(flips.get(i, (i % 2, i % 2))[1], 1)) for i in range(40)]
    run_a = write_run(tmp_path / "a", a, summary={"judges": {"goal_success": {"x": "local"}}})
    run_b = write_run(tmp_path / "b", b, summary={"judges": {"goal_success": {"x": "openai:m"}}})
    assert todeval(str(run_a), str(run_b), "--out", str(tmp_path / "c")) == 0
    out = capsys.readouterr().out
    assert "within noise" in out and "MDD" in out
    assert "judges differ" in out
    figures = json.loads((tmp_path / "c" / "compare.json").read_text())
    gsr_row = figures["metrics"]["gsr"]
    assert gsr_row["within_noise"] and 0 < gsr_row["minimum_detectable_difference"] < 0.5
    assert figures["judges_differ"] is True


def test_a_simulate_folder_says_how_to_score_it_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_a, _ = two_runs(tmp_path)
    simulated = tmp_path / "live"
    simulated.mkdir()
    (simulated / "results.json").write_text('{"simulations": []}')
    (simulated / "summary.json").write_text("{}")
    assert cli_main.main(["compare", str(run_a), str(simulated)]) == 2
    err = capsys.readouterr().err
    assert "a `todeval simulate` output folder" in err
    assert f"todeval evaluate {simulated / 'results.json'} --out DIR" in err
