"""Paper 004's single call: one request per dialogue per LLM, windows, boundary votes, no guess."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from tests.fakes import ScriptedChatModel
from tests.teachers import DIALOGUE, no_backoff, script_teachers
from todeval.evals.schema import Dialogue
from todeval.graphs.goal_success import build_goal_success_graph
from todeval.nodes.context import Context
from todeval.nodes.goal_success.judges.appendix_d import AppendixDJudge, AppendixDOutput, windows
from todeval.nodes.goal_success.roles import SEGMENTATION
from todeval.nodes.goal_success.segmentation import vote_boundaries
from todeval.nodes.judges import llm as llm_module
from todeval.nodes.judges.provider_options import decoding_kwargs
from todeval.nodes.judges.spec import parse_spec
from todeval.stores.llm_cache import LLMCache


def _answer(*turns: tuple[int, str, str, str | None]) -> str:
    return json.dumps(
        {
            "dialog_id": "d",
            "turns": [
                {"turn_number": n, "is_new_goal": new, "quality": q, "rcof": code}
                for n, new, q, code in turns
            ],
        }
    )


def _long_dialogue(n: int) -> Dialogue:
    turns = [
        {"turn_number": k, "user_msg": f"question {k} " + "x" * 400, "response": "answer " * 60}
        for k in range(1, n + 1)
    ]
    return Dialogue.model_validate({"dialog_id": "long", "turns": turns})


def test_long_dialogues_are_judged_in_windows_that_repeat_one_turn() -> None:
    dialogue = _long_dialogue(7)
    parts = windows(dialogue, budget_chars=4200)
    assert len(parts) > 1
    # Each later window opens with the turn before it; every turn is judged exactly once.
    for before, after in zip(parts, parts[1:], strict=False):
        assert after[0].turn_number == before[-1].turn_number
    judged = [t.turn_number for i, part in enumerate(parts) for t in part[(1 if i else 0) :]]
    assert judged == list(range(1, 8))


def test_the_windowed_call_keeps_the_first_answer_for_a_repeated_turn(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    dialogue = _long_dialogue(4)
    parts = windows(dialogue, budget_chars=4200)
    replies = []
    for part in parts:
        quality = "failure" if part is parts[-1] else "success"
        replies.append(_answer(*[(t.turn_number, "no", quality, "E5") for t in part]))
    model = ScriptedChatModel(replies)
    monkeypatch.setattr(llm_module, "load_chat_model", lambda spec, **kw: model)
    cache = LLMCache(tmp_path / "c.sqlite")
    monkeypatch.setattr(llm_module, "default_llm_cache", lambda: cache)
    judge = AppendixDJudge("turn_quality", parse_spec("openai:m"), context_tokens=2048)
    verdict = judge.judge(dialogue)
    assert len(model.calls) == len(parts)
    assert "shown for context only" in str(model.calls[1][-1].content)
    # The repeated turn keeps the earlier window's label; the prompt's E5 stays E5.
    repeated = parts[1][0].turn_number
    assert verdict.turns[repeated - 1] is not None
    assert verdict.turns[repeated - 1].quality == "success"  # type: ignore[union-attr]
    assert verdict.turns[-1].quality == "failure" and verdict.reason is None  # type: ignore[union-attr]


def test_an_llm_segmenter_and_teacher_with_one_spec_cost_one_call(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    reply = _answer((1, "yes", "success", None), (2, "yes", "failure", "E4"),
                    (3, "no", "success", None))  # fmt: skip
    models = script_teachers(monkeypatch, tmp_path, {"openai:one": [reply, reply]})
    SEGMENTATION.cache_clear()
    context = Context(judges={"segmentation": "openai:one", "turn_quality": ["openai:one"]})
    graph = build_goal_success_graph().compile(checkpointer=InMemorySaver())
    out = graph.invoke(
        {"dialogue": DIALOGUE}, {"configurable": {"thread_id": "1"}}, context=context
    )
    assert len(models["openai:one"].calls) == 1  # the teacher read the segmenter's answer
    assert [(g["start_turn"], g["end_turn"]) for g in out["goals"]] == [(1, 1), (2, 3)]
    assert out["goals"][1]["rcof"] == "E1"  # the prompt's E4, canonical E1


def test_teachers_that_segment_outvote_the_segmenter() -> None:
    segmentation = {
        "judge": "local:rules",
        "turns": [
            {"turn_number": 1, "is_new_goal": True},
            {"turn_number": 2, "is_new_goal": False},
            {"turn_number": 3, "is_new_goal": True},
        ],
        "goals": [],
    }

    def voted(number: int, new: bool) -> dict[str, Any]:
        labels = [{"judge": f"openai:{name}", "is_new_goal": new} for name in ("a", "b")]
        return {"turn_number": number, "teachers": labels}

    turns = [voted(1, True), voted(2, True), voted(3, True)]
    result = vote_boundaries(segmentation, turns)
    assert [t["is_new_goal"] for t in result["turns"]] == [True, True, True]
    assert result["voted_by"] == ["local:rules", "openai:a", "openai:b"]
    assert [(g["start_turn"], g["end_turn"]) for g in result["goals"]] == [(1, 1), (2, 2), (3, 3)]
    # Without segmenting teachers the segmenter's goals stand as they are.
    plain = [{"turn_number": k, "teachers": [{"judge": "local:turn"}]} for k in (1, 2, 3)]
    assert vote_boundaries(segmentation, plain) == segmentation


def test_a_failed_segmenter_leaves_goals_unknown_not_one_goal(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(llm_module.LLMJudge, "__init__", no_backoff(llm_module.LLMJudge.__init__))
    script_teachers(monkeypatch, tmp_path, {"openai:mute": ["no JSON here"] * 8})
    SEGMENTATION.cache_clear()
    context = Context(judges={"segmentation": "openai:mute", "turn_quality": ["local:response"]})
    graph = build_goal_success_graph().compile(checkpointer=InMemorySaver())
    out = graph.invoke(
        {"dialogue": DIALOGUE}, {"configurable": {"thread_id": "2"}}, context=context
    )
    assert out["goals"] == []  # no silent single goal: GSR leaves the dialogue out
    assert "goals are unknown" in out["segmentation"]["reason"]
    assert "no JSON" in out["segmentation"]["reason"]


def test_each_window_is_decoded_under_a_schema_that_needs_every_turn_and_label() -> None:
    """A grammar-constrained server gets a schema that a short or label-less answer breaks."""
    spec = parse_spec("openai:smol@http://127.0.0.1:9/v1")
    judge = AppendixDJudge("turn_quality", spec)
    body = decoding_kwargs(spec, AppendixDOutput, 768, judge.llm_for([4, 5, 6]).decoding_schema)
    schema = body["extra_body"]["response_format"]["schema"]
    turns = schema["properties"]["turns"]
    assert (turns["minItems"], turns["maxItems"]) == (3, 3)
    # Entry k is turn k of the window: a small model cannot number two entries alike.
    assert [item["properties"]["turn_number"]["enum"] for item in turns["prefixItems"]] == [
        [4],
        [5],
        [6],
    ]
    for item in turns["prefixItems"]:
        assert set(item["required"]) == {"turn_number", "is_new_goal", "quality", "rcof"}
    # The answer is still parsed leniently: a missing label is null, never an invented one.
    lenient = AppendixDOutput.model_validate({"turns": [{"turn_number": 4}]})
    assert lenient.turns[0].quality is None
