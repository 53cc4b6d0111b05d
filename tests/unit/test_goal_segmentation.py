"""The goal-segmentation graph as a user sees it: final state, checkpoints, judges."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from tests.fakes import ScriptedChatModel
from todeval.graphs.goal_success import build_goal_segmentation_graph
from todeval.nodes.context import Context
from todeval.nodes.goal_success.roles import SEGMENTATION
from todeval.nodes.judges import llm as llm_module
from todeval.nodes.judges.spec import JudgeSpecError
from todeval.stores.llm_cache import LLMCache

DIALOGUE: dict[str, Any] = {
    "dialog_id": "d-1",
    "turns": [
        {
            "turn_number": 1,
            "user_msg": "How many vacation days do I get per year?",
            "response": "Full-time employees get 25 days of paid vacation per year.",
        },
        {
            "turn_number": 2,
            "user_msg": "Does that include public holidays?",
            "response": "No, public holidays are on top of the 25 days.",
        },
        {
            "turn_number": 3,
            "user_msg": "Thanks. Another question: my laptop won't connect to the VPN.",
            "response": "Which VPN client are you using?",
        },
        {
            "turn_number": 4,
            "user_msg": "GlobalProtect",
            "response": "Please update GlobalProtect to 6.2 and sign in again.",
        },
    ],
}


def _run(judge: str, thread: str = "t1") -> dict[str, Any]:
    graph = build_goal_segmentation_graph().compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": thread}}
    return dict(
        graph.invoke(
            {"dialogue": DIALOGUE}, config, context=Context(judges={"segmentation": judge})
        )
    )


@pytest.mark.parametrize("judge", ["local", "local:rules"])
def test_local_judges_find_the_explicit_topic_switch(judge: str) -> None:
    output = _run(judge)
    labels = [turn["is_new_goal"] for turn in output["turns"]]
    assert labels == [True, False, True, False]
    assert output["goals"] == [
        {"goal_index": 0, "start_turn": 1, "end_turn": 2},
        {"goal_index": 1, "start_turn": 3, "end_turn": 4},
    ]
    assert output["judge"] == ("local:learned" if judge == "local" else "local:rules")


def test_checkpoints_record_each_node() -> None:
    graph = build_goal_segmentation_graph().compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "history"}}
    graph.invoke(
        {"dialogue": DIALOGUE}, config, context=Context(judges={"segmentation": "local:rules"})
    )
    written = [snap.metadata.get("writes") for snap in graph.get_state_history(config)]
    steps = [snap.next for snap in graph.get_state_history(config)]
    assert ("build_goal_spans",) in steps and ("segment_goals",) in steps
    assert graph.get_state(config).next == ()
    assert written  # history is non-empty


@pytest.fixture(autouse=True)
def _fresh_llm_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # Each test its own response cache: a cached answer would hide the scripted one.
    cache = LLMCache(tmp_path / "llm_cache.sqlite")
    monkeypatch.setattr(llm_module, "default_llm_cache", lambda: cache)
    SEGMENTATION.cache_clear()


def _with_fake_llm(monkeypatch: pytest.MonkeyPatch, script: list[Any]) -> ScriptedChatModel:
    model = ScriptedChatModel(script)
    monkeypatch.setattr(llm_module, "load_chat_model", lambda spec, **kwargs: model)
    SEGMENTATION.cache_clear()
    return model


def test_llm_judge_reads_the_appendix_d_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    answer = {
        "dialog_id": "d-1",
        "turns": [
            {"turn_number": 1, "is_new_goal": "yes"},
            {"turn_number": 2, "is_new_goal": "no"},
            {"turn_number": 3, "is_new_goal": "yes"},
            {"turn_number": 4, "is_new_goal": "no"},
        ],
    }
    model = _with_fake_llm(
        monkeypatch,
        [f"<think>Turn 3 switches from leave to IT.</think>\n```json\n{json.dumps(answer)}\n```"],
    )
    output = _run("openai:gpt-4o-mini", thread="llm")
    assert [t["is_new_goal"] for t in output["turns"]] == [True, False, True, False]
    assert output["judge"] == "openai:gpt-4o-mini"
    prompt = model.calls[0][-1].content
    # Messages are quoted so that their text cannot pass for the prompt's own instructions.
    assert 'Turn 3\nUser: "Thanks. Another question' in prompt
    assert "is_new_goal" in prompt and "<think>" in prompt


def test_llm_judge_malformed_output_becomes_null_with_reason(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _with_fake_llm(monkeypatch, ["I cannot help with that."] * 10)
    monkeypatch.setattr(llm_module.LLMJudge, "__init__", _no_backoff(llm_module.LLMJudge.__init__))
    output = _run("openai:gpt-4o-mini", thread="bad")
    assert [t["is_new_goal"] for t in output["turns"]] == [True, None, None, None]
    assert output["reason"]
    # A dialogue the judge could not segment has no goals, rather than one invented goal.
    assert output["goals"] == []


def test_llm_judge_missing_turns_are_null(monkeypatch: pytest.MonkeyPatch) -> None:
    partial = {
        "turns": [{"turn_number": 1, "is_new_goal": "yes"}, {"turn_number": 2, "is_new_goal": "no"}]
    }
    _with_fake_llm(monkeypatch, [json.dumps(partial)])
    output = _run("openai:gpt-4o-mini", thread="partial")
    assert [t["is_new_goal"] for t in output["turns"]] == [True, False, None, None]
    assert "3" in output["reason"] and "4" in output["reason"]


def test_unknown_local_variant_is_a_clear_error() -> None:
    with pytest.raises(JudgeSpecError, match="rules"):
        SEGMENTATION.judge("local:nope")


def _no_backoff(init: Any) -> Any:
    def patched(self: Any, *args: Any, **kwargs: Any) -> None:
        kwargs["backoff_s"] = 0.0
        init(self, *args, **kwargs)

    return patched
