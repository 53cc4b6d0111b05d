"""What paper 004's pipeline gives the teachers: a sample, the SOP, and people's verdicts.

``todeval gsr --sample N`` (long sessions oversampled), ``--sop FILE`` (the business rules in
the LLM teachers' prompt) and the calibration loop: ``todeval review`` stores each teacher's
agreement with the verdicts in ``calibration.json`` and the next run (``--calibration``)
reports it and flags the teachers people overruled.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from statistics import fmean
from typing import Any

import pytest

from tests.teachers import DIALOGUE, SCRIPTS, TEACHERS, script_teachers
from tests.unit.test_cli_goal_success import CLEAN, CLEAN_ANSWER
from todeval.cli.main import build_parser, main
from todeval.evals.metrics.goal_success.calibration import applied_calibration, teacher_calibration
from todeval.evals.metrics.goal_success.sampling import SampleSpec, sample_indices
from todeval.nodes.goal_success.roles import TURN_QUALITY

# -- sampling ----------------------------------------------------------------------------------


def test_sample_is_seeded_and_oversamples_long_sessions() -> None:
    lengths = [1, 2] * 25 + [4, 6] * 25  # half short, half long
    spec = SampleSpec(20, seed=7)
    first = sample_indices(lengths, spec)
    assert first == sample_indices(lengths, spec) and first == sorted(first)
    assert len(set(first)) == 20
    assert first != sample_indices(lengths, SampleSpec(20, seed=8))

    def long_share(weight: float) -> float:
        draws = [sample_indices(lengths, SampleSpec(20, s, 4, weight)) for s in range(60)]
        return fmean(sum(lengths[i] >= 4 for i in d) / 20 for d in draws)

    assert long_share(3.0) > 0.62  # weight 3 -> about 0.7 of the sample
    assert abs(long_share(1.0) - 0.5) < 0.06  # no oversampling -> the population's share
    assert sample_indices([1, 5, 2], SampleSpec(10)) == [0, 1, 2]
    with pytest.raises(ValueError, match="at least one"):
        SampleSpec(0)


def _dialogue(i: int, turns: int) -> dict[str, Any]:
    return {
        "dialog_id": f"d{i:02d}",
        "turns": [
            {
                "turn_number": k + 1,
                "user_msg": f"How many vacation days do I get, question {k}?",
                "response": "Full-time employees get 25 days of paid vacation per year.",
            }
            for k in range(turns)
        ],
    }


def test_gsr_sample_evaluates_only_the_drawn_dialogues(tmp_path: Path) -> None:
    corpus = tmp_path / "many.jsonl"
    records = [_dialogue(i, 1 + i % 5) for i in range(12)]
    lines = [json.dumps(r) for r in records] + ['{"dialog_id": "broken"}']
    corpus.write_text("\n".join(lines) + "\n")

    def run(out: Path, seed: int) -> dict[str, Any]:
        argv = ["gsr", str(corpus), "--sample", "4", "--seed", str(seed), "--no-escalation"]
        assert main([*argv, "--checkpoints", ":memory:", "--out", str(out)]) == 0
        summary: dict[str, Any] = json.loads((out / "summary.json").read_text())
        return summary

    summary = run(tmp_path / "a", 5)
    sample = summary["sample"]
    assert sample["n"] == 4 and sample["population"] == 12 and sample["seed"] == 5
    goals = [json.loads(x) for x in (tmp_path / "a" / "goals.jsonl").read_text().splitlines()]
    assert sorted({g["dialogue_id"] for g in goals}) == sample["dialogue_ids"]
    assert summary["counts"]["dialogues"] == 4 and summary["counts"]["skipped_records"] == 1
    assert run(tmp_path / "b", 5)["sample"]["dialogue_ids"] == sample["dialogue_ids"]
    others = {tuple(run(tmp_path / f"s{s}", s)["sample"]["dialogue_ids"]) for s in (6, 7, 8)}
    assert others - {tuple(sample["dialogue_ids"])}  # another seed, another sample
    assert main(["gsr", str(corpus), "--sample", "0", "--out", str(tmp_path / "z")]) == 2


# -- business rules and calibration, with scripted LLM teachers --------------------------------


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    path = tmp_path / "dialogues.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in (DIALOGUE, CLEAN)))
    return path


@pytest.fixture
def models(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[dict[str, Any]]:
    scripted = script_teachers(
        monkeypatch, tmp_path, {s: [SCRIPTS[s], CLEAN_ANSWER] for s in TEACHERS}
    )
    yield scripted
    TURN_QUALITY.cache_clear()


def _gsr(corpus: Path, out: Path, teachers: list[str], *extra: str) -> dict[str, Any]:
    argv = ["gsr", str(corpus), "--teachers", ",".join(teachers), "--segmenter", "local:rules"]
    checkpoints = str(out.parent / f"{out.name}.sqlite")
    assert main([*argv, "--checkpoints", checkpoints, "--out", str(out), *extra]) == 0
    summary: dict[str, Any] = json.loads((out / "summary.json").read_text())
    return summary


SOP = "Mileage questions must be answered with the IRS rate; never quote meal per diems."


@pytest.mark.slow
def test_sop_reaches_the_llm_teachers_prompt_and_local_teachers_ignore_it(
    corpus: Path, tmp_path: Path, models: dict[str, Any]
) -> None:
    sop = tmp_path / "sop.txt"
    sop.write_text(SOP + "\n")
    panel = [*TEACHERS[:2], "local:signals"]
    summary = _gsr(corpus, tmp_path / "run", panel, "--sop", str(sop), "--no-escalation")
    prompts = [m.calls[0][-1].content for m in (models[TEACHERS[0]], models[TEACHERS[1]])]
    assert all(SOP in p and "<sop>" in p for p in prompts)
    assert prompts[0].index(SOP) < prompts[0].index("You are provided with a dialog")
    rules = summary["business_rules"]
    assert rules["read_by"] == TEACHERS[:2] and rules["ignored_by"] == ["local:signals"]
    assert rules["chars"] == len(SOP)
    assert models[TEACHERS[2]].calls == []  # not on the panel

    TURN_QUALITY.cache_clear()
    plain = _gsr(corpus, tmp_path / "plain", panel, "--no-escalation")
    assert plain["business_rules"] == {"given": False}
    last = models[TEACHERS[0]].calls[-1][-1].content
    assert "<sop>" not in last and SOP not in last  # a new request, without the rules


#: What the reviewer says about each turn (escalated turn 2, then the audited ones).
VERDICTS = {
    ("vote-1", 2): ("f", "E3"),
    ("vote-1", 1): ("f", "E1"),
    ("vote-1", 3): ("s", ""),
    ("clean-1", 1): ("s", ""),
}


def _reviewer(capsys: pytest.CaptureFixture[str]) -> Any:
    """Answers each case from :data:`VERDICTS`, reading which case is shown."""
    shown: list[tuple[str, int]] = []
    pending: list[str] = []

    def ask(prompt: str) -> str:
        if prompt.startswith("quality?"):
            found = re.findall(r"dialogue (\S+), turn (\d+):", capsys.readouterr().out)
            shown.append((found[-1][0], int(found[-1][1])))
            quality, code = VERDICTS[shown[-1]]
            pending[:] = [code, "reviewed"] if quality == "f" else ["reviewed"]
            return quality
        return pending.pop(0)

    return ask


def test_verdicts_calibrate_each_teacher_and_the_next_run_flags_the_overruled_one(
    corpus: Path, tmp_path: Path, models: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    first = _gsr(corpus, out, TEACHERS)
    assert first["pending_review"] == 1 and first["calibration"]["this_run"] is None
    args = build_parser().parse_args(["review", str(out), "--audit", "10"])
    assert args.run(args, ask=_reviewer(capsys)) == 0
    printed = capsys.readouterr().out
    assert "teacher calibration against 4 human verdicts" in printed

    calibration = json.loads((out / "calibration.json").read_text())
    rows = {t["judge"]: t for t in calibration["teachers"]}
    # a: E1 vs E3 on turn 2, success vs E1 on turn 1 -> 2 of 4; b names E3 -> 3 of 4;
    # c blames routing on turn 2 and fails the turn people passed -> 1 of 4, flagged.
    assert {j: (r["n"], r["agreement"]) for j, r in rows.items()} == {
        TEACHERS[0]: (4, 0.5),
        TEACHERS[1]: (4, 0.75),
        TEACHERS[2]: (4, 0.25),
    }
    # Flags read the audited turns only: c failed one people passed and passed one they failed.
    assert [j for j, r in rows.items() if r["flagged"]] == [TEACHERS[2]]
    assert rows[TEACHERS[2]]["audited"] == {"n": 3, "agreement": 0.3333}
    assert rows[TEACHERS[2]]["escalated"] == {"n": 1, "agreement": 0.0}
    assert rows[TEACHERS[0]]["audited"] == {"n": 3, "agreement": 0.6667}
    assert rows[TEACHERS[2]]["by_root_cause"] == {
        "E1": {"n": 1, "agreed": 0, "agreement": 0.0},
        "E3": {"n": 1, "agreed": 0, "agreement": 0.0},
        "success": {"n": 2, "agreed": 1, "agreement": 0.5},
    }
    assert rows[TEACHERS[1]]["by_root_cause"]["E3"]["agreement"] == 1.0

    again = _gsr(
        corpus, tmp_path / "next", TEACHERS, "--calibration", str(out / "calibration.json")
    )
    applied = again["calibration"]["applied"]
    assert applied["flagged"] == [TEACHERS[2]] and applied["n_verdicts"] == 4
    assert [t["agreement"] for t in applied["teachers"]] == [0.5, 0.75, 0.25]
    assert again["calibration"]["this_run"] is None  # nobody reviewed the new run yet
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    argv = ["gsr", str(corpus), "--calibration", str(bad), "--out", str(tmp_path / "x")]
    assert main(argv) == 2


def _turn(quality: str, decided_by: str, *labels: tuple[str, str | None]) -> dict[str, Any]:
    teachers = [
        {"judge": f"t{i}", "quality": q, "rcof": code} for i, (q, code) in enumerate(labels)
    ]
    return {"quality": quality, "rcof": None, "decided_by": decided_by, "teachers": teachers}


def test_a_vote_leaning_on_a_flagged_teacher_is_counted() -> None:
    turns = [
        _turn("failure", "vote", ("success", None), ("failure", "E4"), ("failure", "E4")),
        _turn("success", "vote", ("success", None), ("success", None), ("success", None)),
        _turn("failure", "vote", ("failure", "E3"), ("success", None), ("failure", "E3")),
    ]
    verdicts: list[dict[str, Any] | None] = [
        {"quality": "success", "rcof": None},
        {"quality": "success", "rcof": None},
        None,
    ]
    escalated = teacher_calibration(turns * 2, verdicts * 2)
    assert escalated is not None
    # t1 and t2 disagree with people on 2 of 4 turns; escalations alone never flag.
    assert [t["agreement"] for t in escalated["teachers"]] == [1.0, 0.5, 0.5]
    assert not any(t["flagged"] for t in escalated["teachers"])
    worse = [{"quality": "success", "rcof": None}, {"quality": "failure", "rcof": "E2"}, None]
    calibration = teacher_calibration(turns * 2, worse * 2, [True] * 6)
    assert calibration is not None
    # audited: t0 agrees on turn 1 only (0.5, not below the bar); t1 and t2 on neither.
    flags = {t["judge"]: t["flagged"] for t in calibration["teachers"]}
    assert flags == {"t0": False, "t1": True, "t2": True}
    calibration["teachers"][1]["flagged"] = False
    applied = applied_calibration(calibration, turns, "prior.json")
    # turn 1 needs t2 (t1 and t2 agree); turn 2 has three; turn 3 needs t2 as well.
    assert applied["votes_leaning_on_flagged"] == 2 and applied["flagged"] == ["t2"]
    assert teacher_calibration(turns, [None, None, None]) is None


def test_a_review_rewrite_keeps_the_sample(tmp_path: Path) -> None:
    from todeval.graphs.review import GoalSuccessReview

    source = Path(__file__).parents[2] / "data" / "samples" / "enterprise_dialogues.jsonl"
    out = tmp_path / "run"
    argv = ["gsr", str(source), "--sample", "5", "--seed", "2", "--out", str(out)]
    assert main([*argv, "--checkpoints", str(tmp_path / "c.sqlite")]) == 0
    first = json.loads((out / "summary.json").read_text())
    assert first["sample"]["population"] == 34 and first["counts"]["dialogues"] == 5
    again = GoalSuccessReview(out).rewrite()
    assert again["sample"]["dialogue_ids"] == first["sample"]["dialogue_ids"]
    assert again["counts"]["dialogues"] == 5
