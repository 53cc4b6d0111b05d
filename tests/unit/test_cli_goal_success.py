"""``todeval goal-success`` and ``todeval review`` as a user runs them: outputs, escalations."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.teachers import DIALOGUE, SCRIPTS, TEACHERS, script_teachers
from todeval.cli.main import build_parser, main
from todeval.nodes.goal_success.roles import TURN_QUALITY

CLEAN: dict[str, Any] = {
    "dialog_id": "clean-1",
    "turns": [
        {
            "turn_number": 1,
            "user_msg": "How many vacation days do I get per year?",
            "response": "Full-time employees get 25 days of paid vacation per year.",
            "quality": "success",
        }
    ],
}
CLEAN_ANSWER = json.dumps(
    {"turns": [{"turn_number": 1, "quality": "success", "rcof": None, "rationale": "answered"}]}
)


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """The disputed dialogue, a clean one, and a record with a broken turn in between."""
    broken = {"dialog_id": "broken-1", "turns": [{"turn_number": 1, "response": "hi"}]}
    path = tmp_path / "dialogues.jsonl"
    lines = [DIALOGUE, broken, CLEAN]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


@pytest.fixture(autouse=True)
def _teachers(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    # Each model answers the disputed dialogue first, then the clean one.
    script_teachers(monkeypatch, tmp_path, {s: [SCRIPTS[s], CLEAN_ANSWER] for s in TEACHERS})
    yield
    TURN_QUALITY.cache_clear()


def _gsr(corpus: Path, out: Path, *extra: str) -> int:
    return main(
        [
            "gsr",
            str(corpus),
            "--teachers",
            ",".join(TEACHERS),
            "--segmenter",
            "local:rules",
            "--checkpoints",
            str(out.parent / "checkpoints.sqlite"),
            "--out",
            str(out),
            *extra,
        ]
    )


def _goals(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "goals.jsonl").read_text().splitlines()]


def test_gsr_writes_goals_summary_and_report(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert _gsr(corpus, out) == 0
    goals = _goals(out)
    assert [(g["dialogue_id"], g["goal_index"]) for g in goals] == [
        ("vote-1", 0),
        ("vote-1", 1),
        ("clean-1", 0),
    ]
    disputed = goals[1]
    # Turn 2 failed (all three said so) but its cause is disputed: the goal fails, cause pending.
    assert disputed["success"] is False and disputed["rcof"] is None and disputed["pending_review"]
    turn = disputed["turns"][0]
    assert turn["ambiguous"] and turn["quality"] == "failure"
    assert [t["rcof"] for t in turn["teachers"]] == ["E1", "E3", "E6"]

    summary = json.loads((out / "summary.json").read_text())
    assert summary["n_goals"] == 3 and summary["gsr"] == pytest.approx(2 / 3, abs=1e-4)
    assert summary["pending_review"] == 1 and summary["ambiguous"] == 1
    assert summary["counts"]["skipped_records"] == 1
    (skipped,) = summary["skipped"]
    assert skipped["line"] == 2 and skipped["dialogue_id"] == "broken-1"
    assert "user_msg" in skipped["field"]
    assert summary["judges"]["turn_quality"] == TEACHERS
    # Gold exists only for the clean dialogue's turn.
    assert summary["gold_agreement"]["n_turns"] == 1
    assert "<html" in (out / "report.html").read_text().lower()


def test_review_answers_the_escalation_and_rewrites_outputs(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    _gsr(corpus, out)
    assert main(["review", str(out), "--list"]) == 0
    listed = capsys.readouterr().out
    assert "vote-1 turn 2 (rcof)" in listed and "openai:teacher-b=failure/E3" in listed

    answers = iter(["f", "E3", "meals page retrieved"])
    args = build_parser().parse_args(["review", str(out), "--reviewer", "ana"])
    assert args.run(args, ask=lambda prompt: next(answers)) == 0
    shown = capsys.readouterr().out
    assert "retrieved the per diem page" in shown and "> turn 2 user:" in shown

    (verdict,) = [json.loads(x) for x in (out / "verdicts.jsonl").read_text().splitlines()]
    assert verdict["verdict"]["rcof"] == "E3" and verdict["verdict"]["reviewer"] == "ana"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["pending_review"] == 0 and summary["human_verdicts"] == 1
    assert summary["counts"]["resumed_from_checkpoint"] == 2  # nothing judged twice
    teacher_b = summary["human_agreement"]["teachers"][1]
    assert teacher_b["rcof"]["accuracy"] == 1.0
    assert _goals(out)[1]["rcof"] == "E3"
    assert main(["review", str(out)]) == 0
    assert "no open cases" in capsys.readouterr().out


def test_without_escalation_nothing_waits(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert _gsr(corpus, out, "--no-escalation") == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["ambiguous"] == 1 and summary["pending_review"] == 0
    assert summary["pending_review_threads"] == []


def test_unknown_teacher_is_a_usage_error(corpus: Path, tmp_path: Path) -> None:
    code = main(["gsr", str(corpus), "--teachers", "local:nope", "--out", str(tmp_path / "x")])
    assert code == 2


def test_audit_measures_the_vote_against_humans(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    _gsr(corpus, out, "--no-escalation")
    args = build_parser().parse_args(["review", str(out), "--audit", "2"])
    answers = iter(["s", "", "s", ""])
    assert args.run(args, ask=lambda prompt: next(answers)) == 0
    assert "audit: the vote said" in capsys.readouterr().out
    log = [json.loads(x) for x in (out / "verdicts.jsonl").read_text().splitlines()]
    assert [entry["audit"] for entry in log] == [True, True]
    summary = json.loads((out / "summary.json").read_text())
    human = summary["human_agreement"]
    assert human["audited_turns"] == 2 and human["vote"]["quality"]["n"] == 2
    voted_success = sum(entry["voted"]["quality"] == "success" for entry in log)
    assert human["vote"]["quality"]["accuracy"] == voted_success / 2

    # A second audit only offers turns nobody audited yet (4 vote-decided turns in all).
    again = build_parser().parse_args(["review", str(out), "--audit", "5", "--seed", "1"])
    more = iter(["k"] * 10)
    again.run(again, ask=lambda prompt: next(more))
    assert capsys.readouterr().out.count("audit: the vote said") == 2
