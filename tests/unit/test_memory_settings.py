"""MAP's comparison settings (paper 001, Tables 1, 3-4) and its GPT-4 score, through the graph.

Each setting changes what the reader is given; the graph's final state shows which memory was
activated and selected, what the reader wrote and who scored it. LLM roles are scripted fakes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage
from langgraph.checkpoint.memory import InMemorySaver

import todeval.nodes.judges.llm as llm_module
from tests.fakes import ScriptedChatModel
from tests.teachers import no_backoff
from todeval.evals.memory_schema import Individual, MsTodSession
from todeval.graphs.memory import build_memory_graph
from todeval.nodes.context import Context
from todeval.nodes.judges.llm import LLMJudge
from todeval.nodes.memory.bank import fill_bank, memory_bank
from todeval.nodes.memory.roles import CONFIRMATION_SCORE, READER, SUMMARY_WRITER
from todeval.nodes.memory.settings import MemorySettings
from todeval.stores.llm_cache import LLMCache

SINO = {"restaurant_name": "Sino", "city": "San Jose", "time": "6 pm"}
OZ = {"restaurant_name": "Oz Grill", "city": "Fremont", "time": "8 pm"}
GOLD = {"restaurant_name": "Sino", "city": "San Jose", "time": "7 pm"}
"""The item's gold goal, worded as the context and the reader word it."""
UTTERANCE = "Hi again, it's about the reserve restaurant for Sino. For 7 pm please."


def _session(sid: str, goal: dict[str, str]) -> MsTodSession:
    name, city, time = goal["restaurant_name"], goal["city"], goal["time"]
    return MsTodSession(
        session_id=sid,
        domain="Restaurants_1",
        intent="ReserveRestaurant",
        content=[
            {"speaker": "user", "utterance": f"A table at {name} in {city} at {time}, please."},
            {"speaker": "system", "utterance": f"Booked {name} in {city}."},
        ],
        task_goal=goal,
    )


USER = Individual(individual_id="u1", sessions=[_session("s1", SINO), _session("s2", OZ)], eval=[])


def _caches_clear() -> None:
    memory_bank.cache_clear()
    for role in (CONFIRMATION_SCORE, READER, SUMMARY_WRITER):
        role.cache_clear()


@pytest.fixture
def context() -> Iterator[Context]:
    _caches_clear()
    yield Context(
        judges={"memory_judger": "none"},
        settings={"memory": {"bank_backend": "memory", "bank_collection": "settings"}},
    )
    _caches_clear()


@pytest.fixture
def llms(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, ScriptedChatModel]:
    """Every LLM spec answered by the scripted model registered under it (add them in a test)."""
    models: dict[str, ScriptedChatModel] = {}
    cache = LLMCache(tmp_path / "llm_cache.sqlite")
    monkeypatch.setattr(llm_module, "default_llm_cache", lambda: cache)
    monkeypatch.setattr(llm_module, "load_chat_model", lambda spec, **kw: models[spec.raw])
    monkeypatch.setattr(LLMJudge, "__init__", no_backoff(LLMJudge.__init__))
    return models


def _run(context: Context, **extra: Any) -> dict[str, Any]:
    fill_bank(context, USER, sources=("dialogue", "summary"))
    graph = build_memory_graph().compile(checkpointer=InMemorySaver())
    item = {
        "individual_id": "u1",
        "intent": "ReserveRestaurant",
        "context": [{"speaker": "user", "utterance": UTTERANCE}],
        "task_goal": GOLD,
        "reference_response": "Please confirm: a table for Sino in San Jose at 7 pm.",
        "relevant_session_ids": ["s1"],
    }
    result: dict[str, Any] = graph.invoke(
        item | extra, {"configurable": {"thread_id": "t"}}, context=context
    )
    return result


def _field(messages: list[BaseMessage], name: str) -> str:
    """One ``[name] value`` line of the last prompt."""
    found = re.search(rf"\[{name}\] (.*)", str(messages[-1].content))
    return found.group(1) if found else ""


def _score_by_values(messages: list[BaseMessage]) -> str:
    """A scorer that rewards the confirmation for each gold value it states."""
    answer = _field(messages, "predict_answer")
    score = 2 + 4 * ("San Jose" in answer) + 4 * ("7 pm" in answer)
    return json.dumps({"Rationale": f"states {score // 4} values", "Score": score})


def test_map_activates_the_meant_sessions_qa_units_and_refines_them(context: Context) -> None:
    output = _run(context)
    assert {unit_id.split("/")[1] for unit_id in output["selected"]} == {"s1"}
    assert output["activated"] and all(r["unit"]["slot"] for r in output["activated"])
    assert all(not text.startswith("Question:") for text in output["refined"])
    assert output["dialogue_state"] == {
        "restaurant_name": "Sino",
        "city": "San Jose",
        "time": "7 pm",
    }


def test_current_session_has_no_memory_so_the_city_is_missing(context: Context) -> None:
    output = _run(context.updated(settings={"memory": {"setting": "current_session"}}))
    assert output["activated"] is None and output["selected"] == []
    assert "San Jose" not in output["response"]
    # Without memory's values the local capturer cannot tell the name from other words.
    assert output["dialogue_state"] == {"time": "7 pm"}
    assert output["repair"]["initial_missing"] == ["restaurant_name", "city"]


def test_hybrid_rag_without_the_judger_gives_unrefined_qa_pairs(context: Context) -> None:
    # The judger spec is set, but Hybrid RAG has no judger and no refinement (Fig. 4).
    output = _run(
        context.updated(
            judges={"memory_judger": "local"}, settings={"memory": {"setting": "qa_rag"}}
        )
    )
    assert output["judges"]["memory_judger"] == "none"
    assert len(output["selected"]) == MemorySettings.of(context).selected
    assert all(text.startswith("Question: ") for text in output["refined"])


@pytest.mark.parametrize(
    ("setting", "selected"),
    [
        ("full_context", ["u1/s1/#dialogue", "u1/s2/#dialogue"]),
        ("oracle", ["u1/s1/#dialogue"]),
        ("oracle_qa", ["u1/s1/city", "u1/s1/restaurant_name", "u1/s1/time"]),
    ],
)
def test_whole_memory_and_oracle_settings_select_without_ranking(
    context: Context, setting: str, selected: list[str]
) -> None:
    output = _run(context.updated(settings={"memory": {"setting": setting}}))
    assert output["activated"] is None  # nothing is ranked, so Recall@k is not defined
    assert sorted(output["selected"]) == selected


def test_dialogue_rag_ranks_whole_sessions_against_the_context(context: Context) -> None:
    config = context.updated(settings={"memory": {"setting": "dialogue_rag", "selected": 1}})
    output = _run(config.updated(settings={"memory": {"retrieval": "dense"}}))
    assert [row["unit"]["unit_id"] for row in output["activated"]][0] == "u1/s1/#dialogue"
    assert output["selected"] == ["u1/s1/#dialogue"]
    assert output["refined"][0].startswith("Session s1:\nuser: A table at Sino in San Jose")


def test_the_local_reader_and_summarizer_give_none_with_the_reason(context: Context) -> None:
    dialogue = _run(context.updated(settings={"memory": {"setting": "full_context"}}))
    assert dialogue["response"] is None and dialogue["dialogue_state"] is None
    assert any("LLM reader" in reason for reason in dialogue["reasons"])
    summary = _run(context.updated(settings={"memory": {"setting": "summary"}}))
    assert summary["response"] is None and summary["selected"] == []
    assert any("summar" in reason for reason in summary["reasons"])


def test_full_context_prompting_with_an_llm_reader(
    context: Context, llms: dict[str, ScriptedChatModel]
) -> None:
    llms["openai:reader"] = ScriptedChatModel(
        fallback='{"response": "A table at Sino in San Jose at 7 pm, right?"}'
    )
    output = _run(
        context.updated(
            judges={"reader": "openai:reader"}, settings={"memory": {"setting": "full_context"}}
        )
    )
    prompt = str(llms["openai:reader"].calls[0][-1].content)
    assert "Session s1:" in prompt and "Session s2:" in prompt and "Oz Grill" in prompt
    assert output["state_source"] == "response"  # read off the free text
    assert output["dialogue_state"] == {
        "restaurant_name": "Sino",
        "city": "San Jose",
        "time": "7 pm",
    }


def test_summary_memory_with_llm_summaries_and_reader(
    context: Context, llms: dict[str, ScriptedChatModel]
) -> None:
    def summarize(messages: list[BaseMessage]) -> str:
        city = "San Jose" if "Sino" in str(messages[-1].content) else "Fremont"
        return json.dumps({"summary": f"The user booked a table in {city}."})

    llms["openai:summarizer"] = ScriptedChatModel(fallback=summarize)
    llms["openai:reader"] = ScriptedChatModel(
        fallback='{"response": "Sino in Fremont or San Jose at 7 pm?"}'
    )
    config = context.updated(
        judges={"memory_summarizer": "openai:summarizer", "reader": "openai:reader"},
        settings={"memory": {"setting": "summary"}},
    )
    output = _run(config)
    assert len(llms["openai:summarizer"].calls) == 2  # one summary per stored session
    assert sorted(output["selected"]) == ["u1/s1/#summary", "u1/s2/#summary"]
    assert "The user booked a table in Fremont." in output["refined"][1]
    # Both cities stated: the city is ambiguous, so the predicted state has no city.
    assert output["ambiguous_slots"] == ["city"] and "city" not in output["dialogue_state"]


def test_gpt4_score_is_computed_when_an_llm_scorer_is_given(
    context: Context, llms: dict[str, ScriptedChatModel]
) -> None:
    local = _run(context)["gpt4_score"]
    assert local["score"] is None and "LLM" in local["reason"] and local["judge"] == "local"
    llms["openai:scorer"] = ScriptedChatModel(fallback=_score_by_values)
    _caches_clear()
    scored = _run(context.updated(judges={"gpt4_score": "openai:scorer"}))["gpt4_score"]
    assert scored["score"] == 10 and scored["judge"] == "openai:scorer"
    prompt = llms["openai:scorer"].calls[0][-1].content
    assert "[Task Goal] restaurant_name: Sino\ncity: San Jose\ntime: 7 pm" in prompt
    _caches_clear()
    no_memory = context.updated(
        judges={"gpt4_score": "openai:scorer"}, settings={"memory": {"setting": "current_session"}}
    )
    assert _run(no_memory)["gpt4_score"]["score"] == 6  # the city is missing


def test_a_malformed_score_is_none_with_the_reason(
    context: Context, llms: dict[str, ScriptedChatModel]
) -> None:
    llms["openai:scorer"] = ScriptedChatModel(fallback="I would say about eight.")
    scored = _run(context.updated(judges={"gpt4_score": "openai:scorer"}))["gpt4_score"]
    assert scored["score"] is None and scored["reason"]
    assert scored["judge"] == "openai:scorer"
