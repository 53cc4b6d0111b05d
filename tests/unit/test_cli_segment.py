"""``todeval segment`` as a user runs it: output files, bad records, resume, usage errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from todeval.cli.main import main


def _dialogue(i: int, n_turns: int = 3) -> dict[str, Any]:
    turns = [
        {
            "turn_number": k,
            "user_msg": "How do I submit a travel expense claim?"
            if k == 1
            else "And the receipts?",
            "response": "Use Concur: Expenses > New report.",
            "is_new_goal": k == 1,
        }
        for k in range(1, n_turns + 1)
    ]
    return {"dialog_id": f"d-{i}", "turns": turns}


@pytest.fixture()
def corpus(tmp_path: Path) -> Path:
    lines = [json.dumps(_dialogue(i)) for i in range(5)]
    broken = _dialogue(99)
    del broken["turns"][1]["user_msg"]
    lines.insert(2, json.dumps(broken))
    path = tmp_path / "corpus.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def _run(corpus: Path, out: Path, *extra: str) -> dict[str, Any]:
    code = main(
        [
            "segment",
            str(corpus),
            "--out",
            str(out),
            "--judge",
            "local:rules",
            "--checkpoints",
            str(out.parent / "ckpt.sqlite"),
            *extra,
        ]
    )
    assert code == 0
    return dict(json.loads((out / "summary.json").read_text()))


def test_bad_record_is_reported_and_the_rest_evaluated(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    summary = _run(corpus, tmp_path / "out")
    lines = (tmp_path / "out" / "segments.jsonl").read_text().splitlines()
    assert sorted(json.loads(line)["dialogue_id"] for line in lines) == [f"d-{i}" for i in range(5)]
    assert summary["counts"]["skipped_records"] == 1
    (skipped,) = summary["skipped"]
    assert skipped["line"] == 3 and skipped["dialogue_id"] == "d-99"
    assert skipped["field"] == "turns.1.user_msg"
    # Gold labels exist, so the metrics are computed.
    assert summary["metrics"]["n_dialogues"] == 5
    record = json.loads(lines[0])
    assert [t["turn_number"] for t in record["turns"]] == [1, 2, 3]
    assert record["judge"] == "local:rules" and record["goals"][0]["start_turn"] == 1
    assert "1 unreadable records skipped" in capsys.readouterr().out.strip().splitlines()[-1]


def test_rerun_reads_finished_dialogues_back(corpus: Path, tmp_path: Path) -> None:
    first = _run(corpus, tmp_path / "out")
    second = _run(corpus, tmp_path / "out")
    assert first["counts"]["resumed_from_checkpoint"] == 0
    assert second["counts"]["resumed_from_checkpoint"] == 5
    # No duplicates: the file is rewritten, not appended to.
    assert len((tmp_path / "out" / "segments.jsonl").read_text().splitlines()) == 5


def test_a_changed_judge_setting_gets_new_threads(corpus: Path, tmp_path: Path) -> None:
    _run(corpus, tmp_path / "out")
    again = _run(corpus, tmp_path / "out", "--time-gap-minutes", "5")
    assert again["counts"]["resumed_from_checkpoint"] == 0


def test_usage_errors_exit_2_with_a_message(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["segment", str(tmp_path / "missing.jsonl"), "--out", str(tmp_path)]) == 2
    assert "input not found" in capsys.readouterr().err
    assert main(["segment", str(corpus), "--out", str(tmp_path), "--judge", "local:nope"]) == 2
    assert "rules" in capsys.readouterr().err  # names the variants that exist
    assert main(["segment", str(corpus), "--out", str(tmp_path), "--judge", "nope:model"]) == 2


def test_another_build_of_the_judges_gets_new_threads(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An upgrade or another embedding build re-judges instead of reading the old labels back."""
    from todeval.nodes.judges import build

    _run(corpus, tmp_path / "out")
    monkeypatch.setattr(build, "_release", lambda: "99.0")
    build._shipped.cache_clear()
    upgraded = _run(corpus, tmp_path / "out")
    assert upgraded["counts"]["resumed_from_checkpoint"] == 0
    monkeypatch.setenv("TODEVAL_EMBEDDING_PRECISION", "fp32")
    other_embeddings = _run(corpus, tmp_path / "out")
    assert other_embeddings["counts"]["resumed_from_checkpoint"] == 0
    build._shipped.cache_clear()  # the monkeypatched release goes with the test


def test_the_build_stamp_reads_every_shipped_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from todeval.nodes.judges import build

    shipped = {path.relative_to(build.NODES).as_posix() for path in build.shipped_models()}
    assert "goal_success/judges/turn_quality/turn_quality.npz" in shipped
    assert not any(name.endswith(("validity.json", "floors.json")) for name in shipped)
    copy = tmp_path / "nodes" / "judges"
    copy.mkdir(parents=True)
    model = copy / "weights.npz"
    model.write_bytes(b"one")
    monkeypatch.setattr(build, "NODES", tmp_path / "nodes")
    build._shipped.cache_clear()
    before = build.judges_build()
    model.write_bytes(b"two")
    build._shipped.cache_clear()
    retrained = build.judges_build()
    (copy / "validity.json").write_text("{}")
    build._shipped.cache_clear()
    assert retrained != before and build.judges_build() == retrained
    monkeypatch.undo()
    build._shipped.cache_clear()
