"""LLM judges of the goal tracker and the full-context baseline, against scripted models."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, get_args

import pytest
from langchain_core.messages import AIMessage, BaseMessage
from pydantic import ValidationError

from tests.fakes import ScriptedChatModel, count_tokens
from tests.teachers import no_backoff
from todeval.evals.datasets.sgd_schema import ServiceSchema
from todeval.evals.goal_tracking_schema import TRACKED_STATUSES
from todeval.nodes.goal_tracking.baselines.full_context import FullContextJudge
from todeval.nodes.goal_tracking.judges.goal_extraction import Utterance
from todeval.nodes.goal_tracking.judges.goal_extraction.llm import (
    GoalUpdate,
    LLMAuditor,
    LLMGraphEvolver,
    LLMTurnUpdater,
    TrackedStatus,
    render_context,
    render_goals,
    render_schema,
)
from todeval.nodes.judges import llm as llm_module
from todeval.nodes.judges.accounting import JudgeAccounting
from todeval.stores.goal_memory import Goal
from todeval.stores.llm_cache import LLMCache

SPEC = "openai:tracker-test"
Script = Callable[..., ScriptedChatModel]


@pytest.fixture
def script(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Script:
    """Install a scripted model for SPEC, a fresh response cache and no retry backoff."""
    cache = LLMCache(tmp_path / "llm_cache.sqlite")
    monkeypatch.setattr(llm_module, "default_llm_cache", lambda: cache)
    monkeypatch.setattr(llm_module.LLMJudge, "__init__", no_backoff(llm_module.LLMJudge.__init__))

    def install(*replies: Any, fallback: Any = None) -> ScriptedChatModel:
        model = ScriptedChatModel(list(replies), fallback=fallback)
        monkeypatch.setattr(llm_module, "load_chat_model", lambda spec, **kw: model)
        return model

    return install


def goal(goal_id: str, status: str = "open", **fields: Any) -> Goal:
    return Goal.from_dict({"id": goal_id, "dialogue_id": "d1", "status": status} | fields)


MEMORY = [
    goal(
        "g1",
        description="find an italian restaurant in san jose",
        domain="Restaurants_2",
        intent="FindRestaurants",
        slots={"cuisine": "Italian", "city": "San Jose"},
    )
]
CONTEXT = [
    Utterance(1, "USER", "Find me an Italian place in San Jose."),
    Utterance(1, "SYSTEM", "Sino is a nice Italian restaurant in San Jose."),
]
NOW = Utterance(2, "USER", "Great, book a table at Sino for 2 at 11:30.")


def answer(*goals: dict[str, Any], think: str = "the user accepts the offer") -> str:
    return f"<think>{think}</think>\n" + json.dumps({"goals": list(goals)})


BOOK = {
    "description": "reserve a table at Sino for 2 at 11:30",
    "service": "Restaurants_2",
    "intent": "ReserveRestaurant",
    "slots": {"restaurant_name": "Sino", "party_size": 2, "time": "11:30", "date": None},
    "memory_id": None,
    "confidence": 0.05,
    "status": "Open",
}
FOUND = {
    "description": "find an italian restaurant in san jose",
    "service": "Restaurants_2",
    "intent": "FindRestaurants",
    "memory_id": "g1",
    "confidence": 0.92,
    "status": "COMPLETED",
}


def prompt_tokens(messages: list[BaseMessage]) -> int:
    return sum(count_tokens(str(m.text)) for m in messages)


def test_turn_update_reads_the_json_after_the_reasoning(script: Script) -> None:
    reply = answer(BOOK, FOUND, think='maybe {"goals": []}? no: it is a booking')
    model = script(reply)
    update = LLMTurnUpdater(SPEC).update(NOW, CONTEXT, MEMORY, "Restaurants_2: ...")

    assert update.reason is None and update.notes == ()
    book, found = update.goals
    assert (book.intent, book.status, book.matched(0.75)) == ("ReserveRestaurant", "open", None)
    assert book.slots == {"restaurant_name": "Sino", "party_size": "2", "time": "11:30"}
    assert (found.status, found.matched(0.75), found.matched(0.95)) == ("completed", "g1", None)
    prompt = str(model.calls[0][-1].text)
    assert "g1 [open] Restaurants_2.FindRestaurants: find an italian" in prompt
    assert "SYSTEM: Sino is a nice Italian restaurant" in prompt
    assert "Latest utterance (USER): <data>Great, book a table" in prompt
    assert update.call.cost() == {
        "llm_calls": 1,
        "prompt_tokens": prompt_tokens(model.calls[0]),
        "completion_tokens": count_tokens(reply),
    }


def test_malformed_json_is_retried_and_both_attempts_are_paid_for(script: Script) -> None:
    truncated = '<think>a booking</think>{"goals": [{"description": "reserve a table at Sino"'
    model = script(truncated, answer(BOOK))
    update = LLMTurnUpdater(SPEC).update(NOW, CONTEXT, MEMORY)

    assert [g.intent for g in update.goals] == ["ReserveRestaurant"]
    assert len(model.calls) == 2 and "could not be used" in str(model.calls[1][-1].text)
    assert update.call.llm_calls == 2
    assert update.call.prompt_tokens == sum(prompt_tokens(call) for call in model.calls)


def test_a_status_outside_the_lifecycle_is_rejected_and_retried(script: Script) -> None:
    model = script(answer(BOOK | {"status": "in progress"}), answer(BOOK | {"status": "pending"}))
    update = LLMTurnUpdater(SPEC).update(NOW, CONTEXT, MEMORY)

    assert [g.status for g in update.goals] == ["pending"]
    feedback = str(model.calls[1][-1].text)
    assert "goals.0.status: Input should be 'open', 'pending'" in feedback
    assert "(got 'in_progress')" in feedback


@pytest.mark.parametrize(
    "bad",
    [
        {"status": "done"},
        {"status": "not_mentioned"},  # a gold label only: memory holds mentioned goals
        {"status": None},
        {"memory_id": "g1", "confidence": None},  # a match needs a confidence
        {"confidence": 90},
        {"description": "  "},
    ],
)
def test_goal_update_validation_rejects(bad: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        GoalUpdate.model_validate(BOOK | bad)


def test_a_refusal_gives_an_empty_update_with_a_reason(script: Script) -> None:
    refusal = AIMessage(content="", additional_kwargs={"refusal": "I can't help with that."})
    model = script(refusal, "I'm sorry, but I can't assist with that request.")
    updater = LLMTurnUpdater(SPEC, max_retries=1)
    update = updater.update(NOW, CONTEXT, MEMORY)

    assert update.goals == () and len(model.calls) == 2
    assert update.reason is not None and "gave up after 2 attempts" in update.reason
    assert update.call.llm_calls == 2 and updater.last == update.call


def test_timeouts_to_the_end_give_an_empty_update(script: Script) -> None:
    script(TimeoutError("read timed out"), TimeoutError("read timed out"))
    update = LLMTurnUpdater(SPEC, max_retries=1).update(NOW, CONTEXT, MEMORY)
    assert update.goals == () and "TimeoutError" in (update.reason or "")


def test_a_match_to_a_goal_not_shown_becomes_a_new_goal(script: Script) -> None:
    script(answer(FOUND | {"memory_id": "g7"}))
    update = LLMTurnUpdater(SPEC).update(NOW, CONTEXT, MEMORY)
    assert update.goals[0].memory_id is None and update.goals[0].matched(0.0) is None
    assert update.notes == ("g7 is not among the goals shown; read as a new goal",)


def test_a_cached_answer_costs_no_call_and_usage_reaches_the_accounting(script: Script) -> None:
    model = script(answer(BOOK))
    accounting = JudgeAccounting()
    updater = LLMTurnUpdater(SPEC, accounting=accounting)
    first = updater.update(NOW, CONTEXT, MEMORY)
    second = updater.update(NOW, CONTEXT, MEMORY)

    assert len(model.calls) == 1 and first.goals == second.goals
    assert second.call.cache_hit and second.call.cost() == dict.fromkeys(first.call.cost(), 0)
    usage = accounting.snapshot()["goal_turn_update"]
    assert (usage["calls"], usage["cache_hits"]) == (2, 1)
    assert usage["prompt_tokens"] == first.call.prompt_tokens > 0


def test_graph_evolution_keeps_known_related_goals(script: Script) -> None:
    links = {
        "links": [
            {"goal_id": "g1", "relation": 0.9, "depends_on": True},
            {"goal_id": "g3", "relation": 0.3, "depends_on": False},  # below delta
            {"goal_id": "g4", "relation": 0.2, "depends_on": True},  # a dependency is kept
            {"goal_id": "g2", "relation": 1.0, "depends_on": False},  # itself
            {"goal_id": "g9", "relation": 0.8, "depends_on": True},  # unknown
        ]
    }
    model = script("<think>book after find</think>" + json.dumps(links))
    new = goal("g2", description="book Sino", domain="Restaurants_2", intent="ReserveRestaurant")
    others = [*MEMORY, goal("g3", description="play a song"), goal("g4", description="pay")]
    evolver = LLMGraphEvolver(SPEC)

    assert evolver.links(new, [*others, new], delta=0.6) == [("g1", 0.9, True), ("g4", 0.2, True)]
    assert "New goal: g2 [open] Restaurants_2.ReserveRestaurant: book Sino" in str(
        model.calls[0][-1].text
    )
    assert evolver.last.llm_calls == 1
    assert evolver.links(new, [new]) == [] and len(model.calls) == 1
    assert evolver.last.cost() == {"llm_calls": 0, "prompt_tokens": 0, "completion_tokens": 0}


def test_audit_changes_only_live_goals_it_was_shown(script: Script) -> None:
    updates = {
        "updates": [
            {"goal_id": "g1", "status": "Completed", "evidence": " Sino was offered "},
            {"goal_id": "g2", "status": "failed", "evidence": "already completed"},
            {"goal_id": "g3", "status": "pending", "evidence": "no change"},
            {"goal_id": "g9", "status": "abandoned", "evidence": "unknown"},
        ]
    }
    model = script(json.dumps(updates))
    settled = goal("g2", "completed", description="settled")
    waiting = goal("g3", "pending", description="waiting")
    goals = [*MEMORY, settled, waiting]
    auditor = LLMAuditor(SPEC)

    assert auditor.audit(goals, CONTEXT) == [("g1", "completed", "Sino was offered")]
    assert "g2" not in str(model.calls[0][-1].text)
    assert auditor.audit([settled], CONTEXT) == [] and len(model.calls) == 1


def test_full_context_baseline_lists_goals_and_fails_with_a_reason(script: Script) -> None:
    reply = {"goals": [{"description": "find sino", "intent": "FindRestaurants", "status": "OPEN"}]}
    script("<think>one goal</think>" + json.dumps(reply), "no idea", "still no idea")
    judge = FullContextJudge(SPEC, max_retries=1)

    assert [(g.intent, g.status) for g in judge.goals([*CONTEXT, NOW])] == [
        ("FindRestaurants", "open")
    ]
    assert judge.goals([*CONTEXT, NOW, NOW]) == []
    assert "no JSON" in (judge.last.reason or "") and judge.last.llm_calls == 2


def test_full_context_prompt_grows_while_the_turn_update_prompt_stays_bounded(
    script: Script,
) -> None:
    model = script(fallback='{"goals": []}')
    dialogue = [
        Utterance(k // 2 + 1, "USER" if k % 2 == 0 else "SYSTEM", f"utterance {k} about goal {k}")
        for k in range(50)
    ]
    memory = [goal(f"g{i}", description=f"goal number {i}") for i in range(1, 6)]  # top-k = 5
    updater, baseline = LLMTurnUpdater(SPEC, cache=None), FullContextJudge(SPEC, cache=None)
    bounded, full = {}, {}
    for turn in (10, 30, 50):
        bounded[turn] = updater.update(dialogue[turn - 1], dialogue[: turn - 1], memory).call
        baseline.goals(dialogue[:turn])
        full[turn] = baseline.last
        assert "utterance 0 about" in str(model.calls[-1][-1].text)  # the baseline reads it all

    assert "utterance 0 about" not in str(model.calls[-2][-1].text)  # the window does not
    assert bounded[10].prompt_tokens == bounded[30].prompt_tokens == bounded[50].prompt_tokens
    per_utterance = count_tokens("USER: utterance 10 about goal 10")
    assert full[50].prompt_tokens - full[10].prompt_tokens == 40 * per_utterance
    # Its longer instructions cost the turn update more early on; the baseline overtakes it.
    assert full[10].prompt_tokens < bounded[10].prompt_tokens < full[50].prompt_tokens


def test_tracked_statuses_match_the_schema() -> None:
    assert get_args(TrackedStatus) == TRACKED_STATUSES


def test_renderers_are_compact_and_say_none_when_empty() -> None:
    schema = {
        "Restaurants_2": ServiceSchema.model_validate(
            {
                "service_name": "Restaurants_2",
                "intents": [
                    {"name": "FindRestaurants", "description": "Find a restaurant"},
                    {"name": "ReserveRestaurant"},
                ],
            }
        )
    }
    assert render_schema(schema) == (
        "Restaurants_2: FindRestaurants — Find a restaurant\nRestaurants_2: ReserveRestaurant"
    )
    assert render_schema(None) == render_goals([]) == render_context([]) == "none"
    assert render_context([*CONTEXT, NOW], 1) == "USER: Great, book a table at Sino for 2 at 11:30."
    dependent = goal("g2", "pending", description="pay", dependencies=["g1"], slots={"a": "1"})
    assert render_goals([dependent]) == "g2 [pending] pay | slots: a=1 | after: g1"


def test_the_goal_extraction_role_builds_the_trackers_three_llm_judges_once(
    script: Script,
) -> None:
    from todeval.nodes.goal_tracking.roles import GOAL_EXTRACTION, goal_extractor, llm_goal_tracking
    from todeval.nodes.judges.spec import JudgeSpecError

    script(fallback=answer())
    GOAL_EXTRACTION.cache_clear()
    tracking = llm_goal_tracking(SPEC, 2)
    assert tracking is llm_goal_tracking(SPEC, 2) and tracking.name == SPEC
    roles = [tracking.updater.llm.role, tracking.evolver.llm.role, tracking.auditor.llm.role]
    assert roles == ["goal_turn_update", "goal_graph_evolution", "goal_audit"]
    assert tracking.updater.update(NOW, CONTEXT, MEMORY).goals == ()
    GOAL_EXTRACTION.cache_clear()
    with pytest.raises(JudgeSpecError, match="is local"):
        llm_goal_tracking("local")
    with pytest.raises(JudgeSpecError, match="LLM spec"):
        goal_extractor(SPEC)
