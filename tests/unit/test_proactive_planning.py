"""Target planning (paper 003, Eq. 1): the agent plans, the judge scores, the corpus summarises."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.fakes import ScriptedChatModel
from todeval.evals.datasets.proactive import load_proactive
from todeval.evals.metrics.proactive.langsmith import guidance_score, plan_score, plan_score_mean
from todeval.evals.metrics.proactive.tasks import over_runs
from todeval.evals.proactive_schema import ProactiveItem
from todeval.graphs.corpus.proactive import run_target_planning
from todeval.graphs.proactive import planning_graph
from todeval.nodes.context import Context
from todeval.nodes.judges import llm as llm_module
from todeval.nodes.proactive.live_prompts import PLANNING_SYSTEM
from todeval.nodes.proactive.planning import planning_agent
from todeval.nodes.proactive.reference_agent import PLAN_SPEC
from todeval.nodes.prompts.proactive import TARGET_GENERATION_PROMPT
from todeval.nodes.simulation.agents import chat_model as chat_model_module
from todeval.stores.llm_cache import LLMCache
from todeval.stores.paths import PROJECT_ROOT

SAMPLE = PROJECT_ROOT / "data" / "samples" / "proactive"
ITEM = next(
    i
    for i in load_proactive(SAMPLE / "recommendation" / "eval.json")
    if isinstance(i, ProactiveItem)
)


def echo_reference(messages: Sequence[Mapping[str, Any]], tools: Sequence[Any]) -> str:
    """An agent that answers with the reference itself (Listing 4's keys)."""
    return json.dumps({"Target": ITEM.target, "sub-target": ITEM.sub_target})


def off_topic(messages: Sequence[Mapping[str, Any]], tools: Sequence[Any]) -> str:
    """An agent whose plan has nothing to do with the environment."""
    plan = {"target": "Sell car insurance", "sub_target": ["Quote a price", "Close the sale"]}
    return "Here you go: " + json.dumps(plan)


def no_plan(messages: Sequence[Mapping[str, Any]], tools: Sequence[Any]) -> str:
    """An agent that answers in prose."""
    return "I would simply chat with the user."


def plan_of(agent: str, context: Context | None = None) -> dict[str, Any]:
    graph_input = {
        "eval_id": ITEM.eval_id,
        "domain": ITEM.domain,
        "environment": ITEM.environment.model_dump(),
        "reference": ITEM.reference.model_dump(),
        "agent": f"python:tests.unit.test_proactive_planning:{agent}",
        "run": 0,
    }
    return dict(planning_graph.invoke(graph_input, context=context or Context()))


def test_the_local_judge_scores_the_agents_plan_and_ranks_a_good_one_higher() -> None:
    good, bad = plan_of("echo_reference"), plan_of("off_topic")
    assert good["plan"] == ITEM.reference.model_dump()
    assert bad["plan"]["target"] == "Sell car insurance"  # read out of the prose around it
    assert good["plan_verdict"]["judge"] == "local"
    assert good["plan_verdict"]["score"] > bad["plan_verdict"]["score"]


def test_an_agent_with_no_readable_plan_is_left_unscored_with_the_reason() -> None:
    out = plan_of("no_plan")
    assert out["plan"] is None and out["plan_error"].startswith("no readable plan")
    assert out.get("plan_verdict") is None
    row = {"run": 0} | out
    assert over_runs([row], lambda r: None)["unscored"] == 1


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> ScriptedChatModel:
    model = ScriptedChatModel()
    monkeypatch.setattr(llm_module, "default_llm_cache", lambda: LLMCache(tmp_path / "c.sqlite"))
    monkeypatch.setattr(llm_module, "load_chat_model", lambda spec, **kw: model)
    monkeypatch.setattr(chat_model_module, "load_chat_model", lambda spec, **kw: model)
    return model


def test_a_chat_model_agent_gets_listing_4_and_the_llm_judges_score_flows_through(
    scripted: ScriptedChatModel,
) -> None:
    planning_agent.cache_clear()
    scripted.script = [
        json.dumps({"Target": "Recommend Lantern Keepers", "sub-target": ["Ask", "Offer"]}),
        '{"reason": "close to the reference but vaguer", "score": 7}',
    ]
    context = Context(judges={"target_planning": "openai:judge-test"})
    graph_input = {
        "eval_id": ITEM.eval_id,
        "domain": ITEM.domain,
        "environment": ITEM.environment.model_dump(),
        "reference": ITEM.reference.model_dump(),
        "agent": "openai:agent-test",
        "run": 0,
    }
    out = planning_graph.invoke(graph_input, context=context)
    assert out["plan"] == {"target": "Recommend Lantern Keepers", "sub_target": ["Ask", "Offer"]}
    assert out["plan_verdict"]["score"] == 7 and out["plan_verdict"]["judge"] == "openai:judge-test"
    agent_call = scripted.calls[0]
    assert agent_call[0].content == PLANNING_SYSTEM
    sent = str(agent_call[-1].content)
    assert sent.startswith(TARGET_GENERATION_PROMPT.split("{")[0])
    assert ITEM.environment.trigger_factor in sent
    planning_agent.cache_clear()


def test_the_corpus_summarises_by_domain_and_tier_with_std_over_runs(tmp_path: Path) -> None:
    summary = run_target_planning(
        SAMPLE / "recommendation", Context(), out=tmp_path, runs=2, checkpoints=":memory:"
    )
    n_env = summary["counts"]["environments"]
    assert summary["counts"]["runs"] == 2 * n_env and set(summary["by"]) == {"domain", "tier"}
    assert set(summary["by"]["tier"]) == {"eval", "fair", "hard"}
    score = summary["figures"]["score"]
    assert score["runs"] == 2 and score["std"] == 0.0  # the reference agent is deterministic
    assert 1 <= score["mean"] <= 10 and summary["run"]["agent"] == PLAN_SPEC
    lines = (tmp_path / "results.jsonl").read_text().splitlines()
    assert len(lines) == summary["counts"]["runs"]


def test_mean_and_std_are_over_the_run_means() -> None:
    rows = [
        {"run": 0, "v": 2.0},
        {"run": 0, "v": 4.0},
        {"run": 1, "v": 6.0},
        {"run": 1, "v": None},
    ]
    found = over_runs(rows, lambda r: r["v"])
    assert found["mean"] == 4.5 and found["std"] == round((2 * 1.5**2) ** 0.5, 4)
    assert found["scored"] == 3 and found["unscored"] == 1
    assert over_runs(rows[:2], lambda r: r["v"])["std"] is None  # one run: no spread to report


def test_langsmith_evaluators_score_a_line_or_say_why_not() -> None:
    line = plan_of("echo_reference")
    found = plan_score(line, {})
    assert found["key"] == "plan_score" and found["score"] == line["plan_verdict"]["score"]
    missing = plan_score(plan_of("no_plan"), {})
    assert missing["score"] is None and missing["comment"]
    assert guidance_score({}, {})["score"] is None
    mean = plan_score_mean([line, plan_of("no_plan")], [{}, {}])
    assert mean["score"] == line["plan_verdict"]["score"] and "1 of 2" in mean["comment"]
