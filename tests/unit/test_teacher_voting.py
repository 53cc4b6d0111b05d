"""Teacher voting and goal success as a user sees them: votes, interrupts, resumes, final goals."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from tests.fakes import ScriptedChatModel
from tests.teachers import DIALOGUE, SCRIPTS, TEACHERS, no_backoff, script_teachers
from todeval.graphs.goal_success import build_goal_success_graph, build_teacher_voting_graph
from todeval.nodes.context import Context
from todeval.nodes.goal_success.roles import TURN_QUALITY
from todeval.nodes.goal_success.voting import ESCALATION_KIND, majority, vote_turn
from todeval.nodes.judges import llm as llm_module


@pytest.fixture(autouse=True)
def _scripted_teachers(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    script_teachers(monkeypatch, tmp_path)
    yield
    TURN_QUALITY.cache_clear()


def _context(**overrides: Any) -> Context:
    judges = {"segmentation": "local:rules", "turn_quality": TEACHERS}
    return Context(judges=judges).with_flat(overrides)


def test_majority_needs_more_than_half() -> None:
    assert majority(["success", "success", "failure"]) == "success"
    assert majority(["E1", "E3"]) is None
    assert majority(["E1", "E3", "E4"]) is None
    assert majority([]) is None


def test_vote_over_teachers_that_could_judge() -> None:
    def t(quality: str | None, rcof: str | None = None) -> dict[str, Any]:
        return {"judge": "x", "quality": quality, "rcof": rcof, "rationale": ""}

    two_one = vote_turn(1, [t("failure", "E4"), t("failure", "E4"), t("success")])
    assert (two_one["quality"], two_one["rcof"], two_one["ambiguous"]) == ("failure", "E4", False)
    tie = vote_turn(1, [t("failure", "E4"), t("success"), t(None)])
    assert tie["ambiguous"] and tie["ambiguous_fields"] == ["quality"] and tie["quality"] is None
    causes = vote_turn(1, [t("failure", "E3"), t("failure", "E4"), t("success")])
    assert causes["quality"] == "failure" and causes["ambiguous_fields"] == ["rcof"]
    # Paper 004: a label counts when two teachers agree; a lone teacher's label is undecided.
    alone = vote_turn(1, [t(None), t("failure", "E5"), t(None)])
    assert (alone["quality"], alone["rcof"], alone["decided_by"]) == (None, None, "undecided")
    assert alone["lone_label"] == {"judge": "x", "quality": "failure", "rcof": "E5"}
    assert "only x could judge" in alone["undecided_reason"] and not alone["ambiguous"]
    # With one configured teacher there is nobody to agree with: its label stands.
    only = vote_turn(1, [t("failure", "E4")])
    assert (only["quality"], only["rcof"], only["decided_by"]) == (
        "failure",
        "E4",
        "single_teacher",
    )
    # Certain evidence (an empty reply, a logged error) decides by itself.
    certain = vote_turn(1, [t("success"), t("success"), t(None)], ("E5", "the reply is empty"))
    assert (certain["quality"], certain["rcof"], certain["decided_by"]) == (
        "failure",
        "E5",
        "certain_evidence",
    )
    assert certain["certain_evidence"] == "the reply is empty"
    one_code = vote_turn(1, [t("failure"), t("failure", "E2"), t("success")])
    assert one_code["rcof"] == "E2" and not one_code["ambiguous"]
    nobody = vote_turn(1, [t(None), t(None), t(None)])
    assert nobody["quality"] is None and not nobody["ambiguous"] and nobody["decided_by"] is None


def test_all_teachers_disagree_pauses_for_a_human_and_resumes() -> None:
    graph = build_teacher_voting_graph().compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "v1"}}
    paused = graph.invoke({"dialogue": DIALOGUE}, config, context=_context())
    (question,) = paused["__interrupt__"]
    case = question.value
    assert case["kind"] == ESCALATION_KIND and case["turn_number"] == 2
    assert case["ambiguous_fields"] == ["rcof"]
    assert [t["turn_number"] for t in case["excerpt"]] == [1, 2, 3]
    assert [(t["judge"], t["rcof"]) for t in case["teachers"]] == list(
        zip(TEACHERS, ["E1", "E3", "E6"], strict=True)
    )
    assert "retrieved the per diem page" in json.dumps(case)

    final = graph.invoke(
        Command(resume={"quality": "failure", "rcof": "E3", "note": "wrong page"}),
        config,
        context=_context(),
    )
    turns = final["turns"]
    assert [t["quality"] for t in turns] == ["success", "failure", "success"]
    assert turns[1]["rcof"] == "E3" and turns[1]["decided_by"] == "human"
    assert turns[2]["decided_by"] == "vote" and turns[2]["rcof"] is None
    assert final["human_verdicts"] == [
        {
            "turn_number": 2,
            "quality": "failure",
            "rcof": "E3",
            "note": "wrong page",
            "reviewer": None,
        }
    ]
    assert graph.get_state(config).next == ()


def test_a_logged_error_decides_its_turn_whatever_the_teachers_say() -> None:
    dialogue = json.loads(json.dumps(DIALOGUE))
    dialogue["turns"][0]["metadata"] = {"action": {"tool": "search", "status": "error"}}
    graph = build_teacher_voting_graph().compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "v-certain"}}
    context = _context(escalate_ambiguous=False)
    first = graph.invoke({"dialogue": dialogue}, config, context=context)["turns"][0]
    assert (first["quality"], first["rcof"], first["decided_by"]) == (
        "failure",
        "E5",
        "certain_evidence",
    )
    assert "tool action search returned status 'error'" in first["certain_evidence"]
    plain = build_teacher_voting_graph().compile(checkpointer=InMemorySaver())
    again = plain.invoke({"dialogue": DIALOGUE}, {"configurable": {"thread_id": "v-plain"}},
                         context=context)["turns"][0]  # fmt: skip
    assert (again["quality"], again["decided_by"]) == ("success", "vote")


def test_an_invalid_verdict_is_asked_again() -> None:
    graph = build_teacher_voting_graph().compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "v2"}}
    graph.invoke({"dialogue": DIALOGUE}, config, context=_context())
    again = graph.invoke(
        Command(resume={"quality": "success", "rcof": "E3"}), config, context=_context()
    )
    (question,) = again["__interrupt__"]
    assert "no root cause" in question.value["error"]
    final = graph.invoke(Command(resume={"quality": "f", "rcof": "e4"}), config, context=_context())
    assert final["turns"][1]["rcof"] == "E4"


def test_without_escalation_the_ambiguous_label_stays_null() -> None:
    graph = build_teacher_voting_graph().compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "v3"}}
    final = graph.invoke({"dialogue": DIALOGUE}, config, context=_context(escalate_ambiguous=False))
    assert "__interrupt__" not in final
    turn = final["turns"][1]
    assert turn["ambiguous"] and turn["quality"] == "failure" and turn["rcof"] is None


def test_a_teacher_with_malformed_output_abstains(monkeypatch: pytest.MonkeyPatch) -> None:
    broken = ScriptedChatModel(["I refuse to output JSON."] * 8)
    models = {**{s: ScriptedChatModel([SCRIPTS[s]]) for s in TEACHERS[:2]}, TEACHERS[2]: broken}
    monkeypatch.setattr(llm_module, "load_chat_model", lambda spec, **kw: models[spec.raw])
    monkeypatch.setattr(llm_module.LLMJudge, "__init__", no_backoff(llm_module.LLMJudge.__init__))
    TURN_QUALITY.cache_clear()
    graph = build_teacher_voting_graph().compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "v4"}}
    paused = graph.invoke({"dialogue": DIALOGUE}, config, context=_context())
    # Two teachers left: they agree on turns 1 and 3, and split E1/E3 on turn 2.
    assert paused["__interrupt__"][0].value["teachers"][2]["quality"] is None
    state = graph.get_state(config).values
    assert [t["quality"] for t in state["turns"]] == ["success", "failure", "success"]


def test_goal_success_composes_segmentation_and_voting() -> None:
    graph = build_goal_success_graph().compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "g1"}}
    graph.invoke({"dialogue": DIALOGUE}, config, context=_context())
    paused = graph.get_state(config, subgraphs=True)
    assert paused.next == ("teacher_voting",)
    (voting,) = [task.state for task in paused.tasks if task.name == "teacher_voting"]
    assert voting.values["turns"][1]["ambiguous"]  # subgraph state is inspectable
    final = graph.invoke(
        Command(resume={"quality": "failure", "rcof": "E3"}), config, context=_context()
    )
    assert [(g["start_turn"], g["end_turn"]) for g in final["segmentation"]["goals"]] == [
        (1, 1),
        (2, 3),
    ]
    first, second = final["goals"]
    assert first["success"] is True and first["rcof"] is None
    # Strict GSR: the mileage goal failed at turn 2 even though turn 3 fixed it.
    assert second["success"] is False and second["rcof"] == "E3"
    assert second["fractional_credit"] == 0.5 and second["last_turn_success"] is True


def test_llm_teacher_sends_the_papers_prompt_and_maps_its_codes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model = ScriptedChatModel([SCRIPTS["openai:teacher-a"]])
    monkeypatch.setattr(llm_module, "load_chat_model", lambda spec, **kw: model)
    TURN_QUALITY.cache_clear()
    teacher = TURN_QUALITY.judge("openai:teacher-a")
    from todeval.evals.schema import Dialogue

    verdict = teacher.label(Dialogue.model_validate(DIALOGUE))
    assert [t.quality for t in verdict.turns] == ["success", "failure", "success"]
    # The prompt is Appendix D's, its own numbering included; the answer's E4 (the prompt's
    # Language Understanding) is reported as the canonical E1.
    prompt = str(model.calls[0][-1].content)
    assert "E1 Incorrect Sources - irrelevant docs" in prompt and "is_new_goal" in prompt
    assert "[Vacation policy] Full-time employees receive 25 days" in prompt
    assert verdict.turns[1].rcof == "E1"


@pytest.mark.parametrize(
    ("said", "code"),
    [
        ("E3", "E3"),
        ("e4", "E4"),
        ("E6 - Incorrect Routing", "E6"),
        ("Retrieval Failure", "E4"),
        ("out-of-domain", "E7"),
        ("null", None),
        ("", None),
    ],
)
def test_llm_causes_are_read_as_canonical_codes(said: str, code: str | None) -> None:
    from todeval.evals.schema import normalise_rcof

    assert normalise_rcof(said) == code


def test_llm_success_with_a_cause_drops_the_cause_and_bad_codes_are_rejected() -> None:
    from pydantic import ValidationError

    from todeval.nodes.goal_success.judges.appendix_d import AppendixDTurn

    ok = AppendixDTurn.model_validate({"turn_number": 1, "quality": "Success", "rcof": "E2"})
    assert (ok.quality, ok.rcof) == ("success", None)
    with pytest.raises(ValidationError):
        AppendixDTurn.model_validate({"turn_number": 1, "quality": "failure", "rcof": "E9"})
    # The prompt's codes map to the canonical ones; a cause's name is read as it says.
    mapped = [
        AppendixDTurn.model_validate({"turn_number": 1, "quality": "failure", "rcof": code}).rcof
        for code in ("E1", "E2", "E3", "E4", "E5", "Refusal to Answer")
    ]
    assert mapped == ["E3", "E4", "E2", "E1", "E5", "E2"]


def test_steps_reading_one_record_validate_it_once() -> None:
    """Issue 32: the same record object is one model; another object is validated afresh."""
    from todeval.nodes.goal_success.state import read_dialogue

    record = {
        "dialog_id": "d-1",
        "turns": [{"turn_number": 1, "user_msg": "hi", "response": "hey"}],
    }
    first = read_dialogue(record)
    assert read_dialogue(record) is first
    other = json.loads(json.dumps(record).replace("hey", "hello"))
    assert read_dialogue(other) is not first and read_dialogue(other).turns[0].response == "hello"
    assert read_dialogue(record) is not first  # the last record read is the one kept
    assert read_dialogue(record).turns[0].response == "hey"
