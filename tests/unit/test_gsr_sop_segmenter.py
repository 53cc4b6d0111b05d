"""The business rules reach an LLM segmenter too, so it and a same-spec teacher share one call.

``todeval gsr --sop FILE`` puts the SOP in the LLM teachers' Appendix D prompt; an LLM
segmenter sends that same prompt, so a teacher with its spec is answered from the response
cache (one request per dialogue). A local segmenter ignores the rules.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes import ScriptedChatModel
from tests.teachers import DIALOGUE, script_teachers
from tests.unit.test_cli_goal_success import CLEAN
from todeval.cli.main import main
from todeval.nodes.context import Context
from todeval.nodes.goal_success.roles import SEGMENTATION, reads_business_rules, segmenter

SPEC = "openai:teacher-a"
SOP = "Mileage questions must be answered with the IRS rate; never quote meal per diems."


def _answer(dialog_id: str, *turns: tuple[int, str, str, str | None]) -> str:
    labels = [
        {"turn_number": n, "is_new_goal": new, "quality": q, "rcof": code}
        for n, new, q, code in turns
    ]
    return json.dumps({"dialog_id": dialog_id, "turns": labels})


#: Turn 2 opens a second goal and fails (the prompt's E4, canonical E1); the clean one succeeds.
ANSWERS = [
    _answer(
        "vote-1",
        (1, "yes", "success", None),
        (2, "yes", "failure", "E4"),
        (3, "no", "success", None),
    ),
    _answer("clean-1", (1, "yes", "success", None)),
]


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    path = tmp_path / "dialogues.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in (DIALOGUE, CLEAN)))
    return path


@pytest.fixture
def model(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[ScriptedChatModel]:
    SEGMENTATION.cache_clear()
    # a spare pair of answers: a second request per dialogue would be answered, and counted
    yield script_teachers(monkeypatch, tmp_path, {SPEC: ANSWERS * 2})[SPEC]
    SEGMENTATION.cache_clear()


def _gsr(corpus: Path, out: Path, segmenter_spec: str, *extra: str) -> dict[str, Any]:
    argv = ["gsr", str(corpus), "--teachers", SPEC, "--segmenter", segmenter_spec]
    argv += ["--checkpoints", ":memory:", "--out", str(out), "--no-escalation", *extra]
    assert main(argv) == 0
    summary: dict[str, Any] = json.loads((out / "summary.json").read_text())
    return summary


def _sop(tmp_path: Path) -> Path:
    path = tmp_path / "sop.txt"
    path.write_text(SOP + "\n")
    return path


def test_an_llm_segmenter_sends_the_teachers_request_with_the_rules_once_per_dialogue(
    corpus: Path, tmp_path: Path, model: ScriptedChatModel
) -> None:
    out = tmp_path / "run"
    summary = _gsr(corpus, out, SPEC, "--sop", str(_sop(tmp_path)))
    assert summary["business_rules"]["segmenter"] == {"judge": SPEC, "reads": True}
    prompts = [str(call[-1].content) for call in model.calls]
    assert len(prompts) == 2  # one per dialogue: the teacher read the segmenter's answer
    assert all("<sop>" in p and SOP in p for p in prompts)
    goals = [json.loads(x) for x in (out / "goals.jsonl").read_text().splitlines()]
    spans = [(g["start_turn"], g["end_turn"]) for g in goals if g["dialogue_id"] == "vote-1"]
    assert spans == [(1, 1), (2, 3)]  # the segmenter used the answer's boundaries


def test_the_segmenter_reads_the_rules_only_when_it_is_an_llm(model: ScriptedChatModel) -> None:
    with_rules = Context(
        judges={"segmentation": SPEC}, settings={"goal_success": {"teacher_sop": SOP}}
    )
    assert reads_business_rules(segmenter(with_rules))
    assert not reads_business_rules(segmenter(Context(judges={"segmentation": SPEC})))
    local = Context(
        judges={"segmentation": "local:rules"}, settings={"goal_success": {"teacher_sop": SOP}}
    )
    assert not reads_business_rules(segmenter(local))
    assert model.calls == []  # building a judge asks nothing


def test_a_local_segmenter_ignores_the_rules_and_the_summary_says_so(
    corpus: Path, tmp_path: Path, model: ScriptedChatModel
) -> None:
    summary = _gsr(corpus, tmp_path / "run", "local:rules", "--sop", str(_sop(tmp_path)))
    assert len(model.calls) == 2 and all(SOP in str(c[-1].content) for c in model.calls)
    rules = summary["business_rules"]
    assert rules["given"] is True and rules["read_by"] == [SPEC]
    assert "local:rules" not in rules["read_by"]
    assert rules["segmenter"] == {"judge": "local:rules", "reads": False}
