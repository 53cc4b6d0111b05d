"""Dialogue guidance (paper 003): agent <-> simulated user, early stop, memory window, resume."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from tests.fakes import ScriptedChatModel
from todeval.evals.datasets.proactive import load_proactive
from todeval.evals.proactive_schema import ChatMessage, ProactiveItem, TargetPlan
from todeval.graphs.corpus.proactive import run_dialogue_guidance
from todeval.graphs.proactive import build_guidance_graph, guidance_graph
from todeval.nodes.context import Context
from todeval.nodes.judges import llm as llm_module
from todeval.nodes.proactive.guidance import MEMORY_TURNS, guidance_agent, memory_window
from todeval.nodes.proactive.judges.target_reached import LocalTargetReached, agrees
from todeval.nodes.proactive.live_prompts import OPENING_CUE
from todeval.nodes.proactive.reference_agent import GUIDE_SPEC
from todeval.nodes.proactive.roles import TARGET_REACHED
from todeval.nodes.simulation.agents import chat_model as chat_model_module
from todeval.nodes.simulation.users.proactive_user import (
    AGREEABLENESS_TIERS,
    PHRASES,
    LLMProactiveUser,
    LocalProactiveUser,
    ProactiveUserRequest,
    budget,
)
from todeval.stores.llm_cache import LLMCache
from todeval.stores.paths import PROJECT_ROOT

SAMPLE = PROJECT_ROOT / "data" / "samples" / "proactive"
SPEC = "openai:proactive-guidance-test"
SEEN: list[int] = []
"""How many messages the recording agent was shown, one entry per call."""


def silent_agent(messages: Sequence[Mapping[str, Any]], tools: Sequence[Any]) -> str:
    """An agent that never raises a sub-target, and records what it was shown."""
    SEEN.append(len(messages))
    return "Lovely weather today, isn't it?"


def item(eval_id: str = "rec-e-01") -> ProactiveItem:
    found = [i for i in load_proactive(SAMPLE) if isinstance(i, ProactiveItem)]
    return next(i for i in found if i.eval_id == eval_id)


def graph_input(agent: str, agreeableness: str, seed: int = 1) -> dict[str, Any]:
    chosen = item()
    return {
        "eval_id": chosen.eval_id,
        "domain": chosen.domain,
        "environment": chosen.environment.model_dump(),
        "reference": chosen.reference.model_dump(),
        "agent": agent,
        "agreeableness": agreeableness,
        "seed": seed,
    }


def test_a_cooperative_user_reaches_the_target_early_and_the_dialogue_stops() -> None:
    out = guidance_graph.invoke(graph_input(GUIDE_SPEC, "high"), context=Context())
    n_sub = len(item().sub_target)
    assert out["stop_reason"] == "target reached" and out["reached"] is True
    turns = out["turns"]
    assert turns <= n_sub < 6  # at most one turn a sub-target: no push-back at this tier
    assert len(out["messages"]) == 2 * turns and out["messages"][0]["role"] == "assistant"
    assert [c["reached"] for c in out["checks"]] == [False] * (turns - 1) + [True]
    assert out["guidance_verdict"]["overall"] is not None
    assert out["density"]["initiation_density"] is not None


def test_without_reaching_the_target_the_dialogue_stops_at_six_turns() -> None:
    SEEN.clear()
    agent = "python:tests.unit.test_proactive_guidance:silent_agent"
    out = guidance_graph.invoke(graph_input(agent, "high"), context=Context())
    assert out["stop_reason"] == "turn limit" and out["reached"] is False
    assert out["turns"] == 6 and len(out["messages"]) == 12
    assert {a["act"] for a in out["user_acts"]} == {"neutral"}  # nothing raised, nothing agreed


def test_the_agent_sees_only_the_last_three_turns() -> None:
    SEEN.clear()
    agent = "python:tests.unit.test_proactive_guidance:silent_agent"
    guidance_graph.invoke(graph_input(agent, "low"), context=Context())
    # The opening call sees the cue only; then 2, 4, 6 messages, and never more than 3 turns.
    assert SEEN == [1, 2, 4, 6, 6, 6]
    history = [{"role": r, "content": str(n)} for n in range(5) for r in ("assistant", "user")]
    window = memory_window(history)
    assert len(window) == 2 * MEMORY_TURNS and window[0] == {"role": "assistant", "content": "2"}
    assert memory_window([]) == [{"role": "user", "content": OPENING_CUE}]


def test_lower_agreeableness_resists_more_and_takes_longer() -> None:
    runs = {
        tier: guidance_graph.invoke(graph_input(GUIDE_SPEC, tier, seed=7), context=Context())
        for tier in ("low", "medium", "high")
    }
    pushbacks = {
        tier: sum(a["act"] in ("decline", "ask_why", "partial") for a in out["user_acts"])
        for tier, out in runs.items()
    }
    assert pushbacks["high"] == 0 and pushbacks["medium"] == 1
    assert pushbacks["low"] == budget("low", 7) >= 2 or runs["low"]["turns"] == 6
    assert runs["high"]["turns"] < runs["medium"]["turns"] <= runs["low"]["turns"]
    low_acts = {a["act"] for a in runs["low"]["user_acts"]}
    assert low_acts & {"decline", "ask_why"}  # the low tier declines or asks why


def request(tier: str, *, raised_now: set[int], raised: set[int], resisted: int = 0) -> Any:
    return ProactiveUserRequest(
        user_information="A nurse in Leeds.",
        trigger_factor="A new board game is out.",
        agreeableness=tier,  # type: ignore[arg-type]
        messages=({"role": "assistant", "content": "Hi!"},),
        raised_now=frozenset(raised_now),
        raised=frozenset(raised),
        n_sub_targets=3,
        resisted=resisted,
        seed=3,
    )


def test_the_local_user_resists_by_tier_and_accepts_when_every_sub_target_is_raised() -> None:
    user = LocalProactiveUser()
    assert user.act(request("high", raised_now=set(), raised=set())) == "neutral"
    assert user.act(request("high", raised_now={0}, raised={0})) == "accept_step"
    assert user.act(request("high", raised_now={2}, raised={0, 1, 2})) == "accept_target"
    assert user.act(request("medium", raised_now={0}, raised={0})) in ("ask_why", "partial")
    assert user.act(request("medium", raised_now={0}, raised={0}, resisted=1)) == "accept_step"
    assert all(2 <= budget("low", seed) <= 4 for seed in range(30))
    assert len({budget("low", seed) for seed in range(30)}) > 1  # the seed varies it
    first = user.reply(request("low", raised_now={0}, raised={0}))
    assert first.resisted and first.act in ("decline", "ask_why")
    assert first == user.reply(request("low", raised_now={0}, raised={0}))  # pure, resumable


def test_the_local_check_needs_the_final_step_put_and_an_unhedged_yes() -> None:
    plan = TargetPlan(
        target="Recommend Lantern Keepers",
        sub_target=["Ask about Friday game nights", "Suggest Lantern Keepers"],
    )
    check = LocalTargetReached()
    said = ChatMessage(role="assistant", content="How are Friday game nights going?")
    offer = ChatMessage(role="assistant", content="You could try Lantern Keepers, I suggest it!")
    yes = ChatMessage(role="user", content=PHRASES["accept_target"][0])
    assert check.check(plan, [said, yes]).reached is False  # the final step never came up
    assert check.check(plan, [said, offer, yes]).reached is True
    hedge = ChatMessage(role="user", content=PHRASES["partial"][0])
    assert check.check(plan, [said, offer, hedge]).reached is False
    assert agrees("Sixty an hour? Alright, you've got me. I'll take her on Thursday.")
    assert not agrees("Fine, I'll have a look. No promises.")  # hedged afterwards
    assert all(agrees(p) for p in PHRASES["accept_target"])
    assert not any(agrees(p) for act in ("decline", "ask_why", "partial") for p in PHRASES[act])


def test_a_killed_dialogue_resumes_at_its_last_turn() -> None:
    SEEN.clear()
    agent = "python:tests.unit.test_proactive_guidance:silent_agent"
    whole = guidance_graph.invoke(graph_input(agent, "high"), context=Context())
    calls_whole = len(SEEN)
    SEEN.clear()
    graph = build_guidance_graph().compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "killed"}}
    steps = graph.stream(graph_input(agent, "high"), config, context=Context(), durability="sync")
    for n, _ in enumerate(steps):
        if n == 6:  # two full turns and part of a third
            break
    assert graph.get_state(config).next  # stopped mid-dialogue
    resumed = graph.invoke(None, config, context=Context())
    assert len(SEEN) == calls_whole  # no agent turn was asked twice
    assert resumed["messages"] == whole["messages"] and resumed["turns"] == 6


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> ScriptedChatModel:
    model = ScriptedChatModel()
    monkeypatch.setattr(llm_module, "default_llm_cache", lambda: LLMCache(tmp_path / "c.sqlite"))
    monkeypatch.setattr(llm_module, "load_chat_model", lambda spec, **kw: model)
    monkeypatch.setattr(chat_model_module, "load_chat_model", lambda spec, **kw: model)
    return model


def test_the_llm_user_gets_its_tier_and_the_llm_check_reads_its_json(
    scripted: ScriptedChatModel,
) -> None:
    scripted.script = [
        '{"message": "Why should I?", "accepted": false}',
        '{"reason": "the user agreed", "reached": true}',
    ]
    turn = LLMProactiveUser(SPEC, backoff_s=0).reply(request("low", raised_now={0}, raised={0}))
    assert turn.content == "Why should I?" and turn.accepted is False
    assert AGREEABLENESS_TIERS["low"] in str(scripted.calls[0][-1].content)
    plan = TargetPlan(target="Recommend it", sub_target=["Ask", "Offer"])
    verdict = TARGET_REACHED.llm_judge(SPEC, backoff_s=0).check(
        plan, [ChatMessage(role="assistant", content="Try it?")]
    )
    assert verdict.reached is True and verdict.reason == "the user agreed"
    assert "assistant: Try it?" in str(scripted.calls[1][-1].content)


def test_the_corpus_runs_each_tier_and_run_and_resumes_finished_threads(tmp_path: Path) -> None:
    source = SAMPLE / "recommendation" / "eval.json"
    checkpoints = str(tmp_path / "ck.sqlite")
    first = run_dialogue_guidance(
        source, Context(), out=tmp_path / "a", runs=2, checkpoints=checkpoints
    )
    n_env = first["counts"]["environments"]
    assert first["counts"]["runs"] == n_env * 3 * 2
    assert set(first["by"]["agreeableness"]) == {"low", "medium", "high"}
    score = first["figures"]["score"]
    assert score["runs"] == 2 and score["std"] is not None
    lines = [json.loads(x) for x in (tmp_path / "a" / "results.jsonl").read_text().splitlines()]
    assert len(lines) == first["counts"]["runs"] and not any(x["resumed"] for x in lines)
    again = run_dialogue_guidance(
        source, Context(), out=tmp_path / "b", runs=2, checkpoints=checkpoints
    )
    lines_b = [json.loads(x) for x in (tmp_path / "b" / "results.jsonl").read_text().splitlines()]
    assert all(x["resumed"] for x in lines_b) and again["figures"] == first["figures"]
    assert "dialogue guidance" in (tmp_path / "a" / "report.html").read_text()


def test_a_chat_model_agent_gets_the_environment_and_plan_and_leads(
    scripted: ScriptedChatModel,
) -> None:
    guidance_agent.cache_clear()  # a cached agent would hold another test's model
    chosen = item()
    scripted.script = [f"Hi! Shall we {s.lower()}?" for s in chosen.sub_target]
    scripted.fallback = "Shall we go ahead?"
    out = guidance_graph.invoke(graph_input("openai:agent-test", "high"), context=Context())
    system, first = scripted.calls[0][0], scripted.calls[0][-1]
    assert chosen.target in str(system.content)
    assert chosen.environment.user_information in str(system.content)
    assert first.content == OPENING_CUE and len(scripted.calls[0]) == 2
    assert out["messages"][0]["content"].startswith("Hi! Shall we")
    assert out["stop_reason"] == "target reached"
    guidance_agent.cache_clear()
