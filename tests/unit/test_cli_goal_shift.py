"""``todeval goal-shift`` as a user runs it: results in, conversations.jsonl/summary/report out."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

from tests.unit.test_tau2_loader import GOOD_MESSAGES, RUN40, call, needs_run40, results_file
from todeval.cli import goal_shift
from todeval.cli.common import UsageError
from todeval.graphs import runner
from todeval.graphs.api import JudgeSpecError

CONTRACT = {
    "tsr",
    "tsr_channels",
    "tue",
    "tool_correctness",
    "param_validity",
    "num_tool_calls",
    "tcrr",
    "tcrr_window",
    "tcrr_batch",
    "num_redundant",
    "gsrt",
    "pass_hat_k",
    "by_persona",
    "by_task",
}


def todeval(*argv: str) -> int:
    """The subcommand through argparse, as ``todeval goal-shift ...`` parses it."""
    parser = argparse.ArgumentParser(prog="todeval")
    goal_shift.add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["goal-shift", *argv])
    code: int = args.run(args)
    return code


def read(out: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    summary = json.loads((out / "summary.json").read_text())
    rows = [json.loads(line) for line in (out / "conversations.jsonl").read_text().splitlines()]
    return summary, rows


def test_run_with_a_malformed_transcript_and_an_unreadable_record(tmp_path: Path) -> None:
    stored = {
        "reward": 1.0,
        "nl_assertions": [{"nl_assertion": "no transfer", "met": True}],
        "info": {"gsrt_v2": {"user_goal_shifts": [{"turn": 1, "acknowledgment_turn": 2}]}},
    }
    repeated = [
        {"role": "user", "content": "hi, my account is acc_001", "turn_idx": 0},
        *(
            {
                "role": "assistant",
                "tool_calls": [call(f"r{i}", "get_account", {"account_id": "acc_001"})],
                "turn_idx": 2 * i + 1,
            }
            for i in range(3)
        ),
        {"role": "assistant", "tool_calls": [call("x", "get_account", "not json")], "turn_idx": 9},
    ]
    results = results_file(
        tmp_path,
        [
            {"id": "s1", "task_id": "t1", "messages": GOOD_MESSAGES, "reward_info": stored},
            {"id": "s2", "task_id": "t1", "messages": repeated},
            {"id": "s3", "task_id": "t1", "messages": "not a list"},
        ],
    )
    out = tmp_path / "run"
    assert todeval(str(results), "--out", str(out), "--checkpoints", ":memory:") == 0
    summary, rows = read(out)
    assert CONTRACT <= summary.keys()
    assert set(summary["tsr_channels"]) == {"communicate_info", "action", "nl_assertion"}
    assert {"shifts", "recovery_rate", "transfer_rate", "median_ack", "median_tool"} <= set(
        summary["gsrt"]
    )
    assert [r["dialogue_id"] for r in rows] == ["s1", "s2"]
    good, bad = rows
    assert good["tsr"] == pytest.approx(1.0) and good["shift_judge"] == "stored"
    # s2: the 2nd and 3rd get_account repeat one of the previous 3 assistant turns; the 4th
    # call's arguments are not JSON (a different identity) and have no result.
    assert bad["num_redundant"] == 2 and bad["num_tool_calls"] == 4
    assert bad["param_validity"] == pytest.approx(3 / 4)
    fields = {issue["field"] for issue in bad["issues"]}
    assert "messages.4.tool_calls.0.arguments" in fields
    assert "messages.1.tool_calls.0" in fields  # no tool result
    assert summary["counts"] == {
        "conversations": 2,
        "skipped_records": 1,
        "failed_conversations": 0,
        "conversations_with_issues": 1,
        "conversations_shifts_not_judged": 0,
    }
    assert summary["skipped"][0]["dialogue_id"] == "s3"
    assert summary["skipped"][0]["field"] == "messages"
    assert summary["num_tool_calls"] == 5 and summary["gsrt"]["shifts"] == 1
    # Both are trials of task t1: s1's reward is 1.0, s2's TSR is below 1.
    assert summary["pass_hat_k"] == {"1": 0.5, "2": 0.0}
    html = (out / "report.html").read_text()
    assert 'id="goal-shift"' in html and "<svg" in html and "Transcript issues" in html


def test_bad_judge_spec_and_missing_input_are_usage_errors(tmp_path: Path) -> None:
    results = results_file(tmp_path, [{"id": "s1", "task_id": "t1", "messages": GOOD_MESSAGES}])
    with pytest.raises(JudgeSpecError, match="local variant"):  # main() exits 2 on it
        todeval(str(results), "--out", str(tmp_path / "o"), "--judge", "local:psychic")
    with pytest.raises(UsageError, match="not found"):
        todeval(str(tmp_path / "none.json"), "--out", str(tmp_path / "o"))


def test_rerun_resumes_finished_threads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    results = results_file(tmp_path, [{"id": "s1", "task_id": "t1", "messages": GOOD_MESSAGES}])
    checkpoints = str(tmp_path / "checkpoints.sqlite")
    assert todeval(str(results), "--out", str(tmp_path / "a"), "--checkpoints", checkpoints) == 0
    invoked: list[Any] = []
    original = runner.run_dialogue

    def spy(graph: Any, *args: Any, **kwargs: Any) -> Any:
        result = original(graph, *args, **kwargs)
        invoked.append(result.resumed)
        return result

    monkeypatch.setattr(runner, "run_dialogue", spy)
    assert todeval(str(results), "--out", str(tmp_path / "b"), "--checkpoints", checkpoints) == 0
    assert invoked == [True]
    assert read(tmp_path / "a")[1] == read(tmp_path / "b")[1]


def test_clean_run_gives_retention_and_drop(tmp_path: Path) -> None:
    results = results_file(tmp_path, [{"id": "s1", "task_id": "t1", "messages": GOOD_MESSAGES}])
    clean = tmp_path / "clean.json"
    payload = json.loads(results.read_text())
    payload["simulations"][0]["messages"] = GOOD_MESSAGES[:2]  # never called the tool
    clean.write_text(json.dumps(payload))
    out = tmp_path / "run"
    argv = [str(results), "--out", str(out), "--checkpoints", ":memory:", "--clean", str(clean)]
    assert todeval(*argv) == 0
    summary, _ = read(out)
    retention = summary["retention"]
    # "Shifted": tx_101 said (CI 1), the phone lookup made (action 1), no transfer after work
    # of its own (nl 1.0) -> TSR 1.0. "Clean" did nothing: CI 0, action 0, and not handing
    # over is no evidence (nl undecided, the channel drops) -> TSR 0.0, not 0.3 for nothing.
    assert summary["tsr"] == pytest.approx(1.0)
    assert retention["tsr"]["clean"] == pytest.approx(0.0)
    assert retention["tsr"]["retention"] is None  # nothing to retain from
    assert retention["tsr"]["drop"] == pytest.approx(-1.0)
    assert retention["tue"]["clean"] is None and retention["tue"]["drop"] is None


@needs_run40
def test_run40_default_and_upstream(tmp_path: Path) -> None:
    for compat, redundant in (("none", 70), ("upstream", 126)):
        out = tmp_path / compat
        argv = [str(RUN40), "--out", str(out), "--checkpoints", ":memory:", "--compat", compat]
        assert todeval(*argv) == 0
        summary, rows = read(out)
        assert len(rows) == 40 and summary["compat"] == compat
        assert summary["num_redundant"] == redundant and summary["num_tool_calls"] == 264
        assert summary["gsrt"]["shifts"] == 38
        assert set(summary["by_persona"]) == {"EASY_1", "EASY_2", "MEDIUM_1", "MEDIUM_2", "HARD_1"}
        assert len(summary["by_task"]) == 40
        html = (out / "report.html").read_text()
        macro = summary["macro"]["by_persona"]
        assert macro["groups"] == 5 and macro["tue"] != pytest.approx(summary["tue"])
        section = html.split("Pooled and macro averages", 1)[1].split("</table>", 1)[0]
        persona_row = section.split("macro over personas", 1)[1].split("</tr>", 1)[0]
        assert f"{100 * macro['tue']:.2f}" in persona_row
        assert f"{100 * summary['tue']:.2f}" in section.split("macro over", 1)[0]
