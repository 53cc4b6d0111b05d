"""ATOD's baselines as goal trackers (Table 3): the same output as ATOD, local and scripted LLM."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from tests.fakes import ScriptedChatModel
from tests.teachers import no_backoff
from tests.unit.test_cli_goal_tracking import ATOD
from tests.unit.test_goal_tracker import SCHEMA
from todeval.cli.main import main
from todeval.graphs.goal_tracking import build_baseline_tracking_graph
from todeval.nodes.context import Context, LLMSettings
from todeval.nodes.goal_tracking.baselines.memory_views import MEMO_SPAN, METHODS
from todeval.nodes.goal_tracking.baselines.tracker import baseline_judges, merge_answer
from todeval.nodes.goal_tracking.settings import GoalTrackingSettings
from todeval.nodes.goal_tracking.tracker import goal_memory
from todeval.nodes.judges import llm as llm_module
from todeval.nodes.prompts.goal_tracking import (
    FULL_CONTEXT_PROMPT,
    MEMOCHAT_MEMO_PROMPT,
    MEMORY_TRACKER_PROMPT,
    RSUM_UPDATE_PROMPT,
)
from todeval.stores.llm_cache import LLMCache

SPEC = "openai:baseline-test"


@pytest.fixture(autouse=True)
def _fresh_memory() -> None:
    goal_memory.cache_clear()
    baseline_judges.cache_clear()  # judges hold the model of the test that built them


def _prompts(model: ScriptedChatModel) -> list[str]:
    """The first user message of every call (a retry adds a correction after it)."""
    return [next(str(m.content) for m in call if m.type == "human") for call in model.calls]


def _run(context: Context, utterances: list[dict[str, str]]) -> dict[str, Any]:
    graph = build_baseline_tracking_graph().compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": GoalTrackingSettings.of(context).tracker}}
    out: dict[str, Any] = graph.invoke(
        {"dialogue_id": "d1", "utterances": utterances, "final": True}, config, context=context
    )
    return out


UTTERANCES = [{"speaker": t["speaker"], "text": t["utterance"]} for t in ATOD["turns"]]


def test_merge_answer_keeps_identities_histories_and_forgotten_goals() -> None:
    find = {"description": "find sino", "service": "R_1", "intent": "Find", "status": "open"}
    book = {"description": "Book  Sino", "service": "", "intent": "", "status": "open"}
    first = merge_answer([], [find, book], 1)
    assert [g["id"] for g in first] == ["g1", "g2"]
    second = merge_answer(first, [find | {"status": "completed", "description": "other words"}], 2)
    assert second[0]["status"] == "completed" and second[1]["status"] == "open"  # g2 forgotten
    assert second[0]["status_history"] == [
        {"turn": 1, "status": "open"},
        {"turn": 2, "status": "completed"},
    ]
    third = merge_answer(second, [book | {"description": "book sino", "status": "pending"}], 3)
    assert len(third) == 2 and third[1]["status"] == "pending"  # the same words: the same goal
    assert merge_answer(third, None, 4) == third and first[0]["status"] == "open"  # no mutation


@pytest.mark.parametrize("method", METHODS)
def test_every_local_baseline_answers_every_utterance_in_atods_output(
    method: str, tmp_path: Path
) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(SCHEMA))
    context = Context(
        schema_path=str(schema),
        settings={"goal_tracking": {"tracker": method, "vector_backend": "memory"}},
    )
    out = _run(context, UTTERANCES)
    assert [t["turn"] for t in out["turns"]] == [1, 2, 3, 4]
    assert len(out["costs"]) == 4 and all(c["llm_calls"] == 0 for c in out["costs"])
    assert out["queries"] == []  # no existence check over a memory: recall is n/a, not 0
    intents = {g["intent"] for g in out["goals"]}
    assert "FindRestaurants" in intents
    for goal in out["goals"]:
        assert goal["status_history"][-1]["status"] == goal["status"]


def _tracker_reply(goals: list[dict[str, str]]) -> str:
    return "<think>reading</think>" + json.dumps({"goals": goals})


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> ScriptedChatModel:
    """A model that answers each baseline prompt by its kind."""
    cache = LLMCache(tmp_path / "cache.sqlite")
    monkeypatch.setattr(llm_module, "default_llm_cache", lambda: cache)
    monkeypatch.setattr(llm_module.LLMJudge, "__init__", no_backoff(llm_module.LLMJudge.__init__))
    find = {"description": "find an italian restaurant", "service": "Restaurants_9",
            "intent": "FindRestaurants", "status": "open"}  # fmt: skip

    def answer(messages: list[Any]) -> str:
        text = next(str(m.content) for m in messages if m.type == "human")
        if text.startswith(RSUM_UPDATE_PROMPT.split("{")[0]):
            return json.dumps({"summary": f"summary after {text.count(chr(10))} lines"})
        if text.startswith(MEMOCHAT_MEMO_PROMPT.split("{")[0]):
            return json.dumps({"memos": [{"topic": "italian restaurant", "summary": "offered"}]})
        if "booked" in text.rsplit("Latest utterance", 1)[-1] or "booked" in text[-200:]:
            return _tracker_reply([find | {"status": "completed"}])
        return _tracker_reply([find])

    model = ScriptedChatModel(fallback=answer)
    monkeypatch.setattr(llm_module, "load_chat_model", lambda spec, **kw: model)
    return model


def test_llm_rsum_rewrites_its_summary_and_reads_it_back(scripted: ScriptedChatModel) -> None:
    out = _run(
        Context(judges={"goal_extraction": SPEC}, settings={"goal_tracking": {"tracker": "rsum"}}),
        UTTERANCES,
    )
    sent = _prompts(scripted)
    asks = [t for t in sent if t.startswith(MEMORY_TRACKER_PROMPT.split("{")[0])]
    writes = [t for t in sent if t.startswith(RSUM_UPDATE_PROMPT.split("{")[0])]
    assert len(asks) == len(writes) == 4  # one answer and one summary per utterance
    assert "summary after" in asks[1] and "recursive summarisation" in asks[0]
    assert all(c["llm_calls"] == 2 and c["prompt_tokens"] > 0 for c in out["costs"])
    (goal,) = out["goals"]
    assert goal["intent"] == "FindRestaurants" and goal["status"] == "completed"
    assert [h["turn"] for h in goal["status_history"]] == [1, 4]


def test_llm_memochat_writes_a_memo_per_span_and_recalls_it(scripted: ScriptedChatModel) -> None:
    utterances = UTTERANCES * 2  # 8 utterances: one full span of MEMO_SPAN
    _run(
        Context(
            judges={"goal_extraction": SPEC}, settings={"goal_tracking": {"tracker": "memochat"}}
        ),
        utterances,
    )
    sent = _prompts(scripted)
    memos = [t for t in sent if t.startswith(MEMOCHAT_MEMO_PROMPT.split("{")[0])]
    asks = [t for t in sent if t.startswith(MEMORY_TRACKER_PROMPT.split("{")[0])]
    assert len(memos) == len(utterances) // MEMO_SPAN and len(asks) == len(utterances)
    assert "[memo] italian restaurant: offered" in asks[MEMO_SPAN]
    assert "[memo]" not in asks[MEMO_SPAN - 1]


def test_llm_full_context_grows_and_a_failed_answer_changes_nothing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(llm_module, "default_llm_cache", lambda: LLMCache(tmp_path / "c.sqlite"))
    monkeypatch.setattr(llm_module.LLMJudge, "__init__", no_backoff(llm_module.LLMJudge.__init__))
    find = {"description": "find sino", "service": "Restaurants_9", "intent": "FindRestaurants",
            "status": "open"}  # fmt: skip
    done = _tracker_reply([find | {"status": "completed"}])
    model = ScriptedChatModel([_tracker_reply([find]), "no json", "still none"], fallback=done)
    monkeypatch.setattr(llm_module, "load_chat_model", lambda spec, **kw: model)
    context = Context(
        judges={"goal_extraction": SPEC},
        llm=LLMSettings(max_retries=1),
        settings={"goal_tracking": {"tracker": "full-context"}},
    )
    out = _run(context, UTTERANCES[:3])
    sent = _prompts(model)
    assert all(t.startswith(FULL_CONTEXT_PROMPT.split("{")[0]) for t in sent)
    assert ATOD["turns"][0]["utterance"] in sent[-1]  # the whole dialogue, every time
    assert [t["goal_states"] for t in out["turns"]] == [
        {"g1": "open"},
        {"g1": "open"},  # the malformed answer (two calls) left the goals as they were
        {"g1": "completed"},
    ]
    assert out["costs"][1]["llm_calls"] == 2


def test_track_goals_runs_a_baseline_and_says_which(tmp_path: Path) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(SCHEMA))
    corpus = tmp_path / "atod.jsonl"
    corpus.write_text(json.dumps(ATOD) + "\n")
    out = tmp_path / "run"
    flags = ["--vector-backend", "memory", "--checkpoints", ":memory:", "--out", str(out)]
    code = main(["track-goals", str(corpus), "--schema", str(schema), "--tracker", "memorybank",
                 *flags])  # fmt: skip
    assert code == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["judges"]["tracker"] == "memorybank"
    assert summary["goal_detection_f1"] is not None
    assert summary["memory_recall_accuracy"] is None  # no memory queries to judge
    bad = main(["track-goals", str(corpus), "--tracker", "nope", "--out", str(out)])
    assert bad == 2
