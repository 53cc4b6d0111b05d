"""The proactive slot repair graph (MAP §4.3): L, the agent/user/supervisor loop, DTE, success."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage

import todeval.nodes.judges.llm as llm_module
from tests.fakes import ScriptedChatModel
from todeval.graphs.memory import build_slot_repair_graph
from todeval.graphs.memory import slot_repair_graph as graph
from todeval.nodes.context import Context
from todeval.nodes.judges.local import register_local_judge
from todeval.nodes.memory.judges.repair_agent import ProactiveAgent, RepairRequest
from todeval.nodes.memory.judges.supervisor import MentionSupervisor, RepairExchange
from todeval.nodes.memory.roles import REPAIR_AGENT, SUPERVISOR
from todeval.nodes.memory.settings import MemorySettings
from todeval.nodes.simulation.roles import USER_SIMULATOR
from todeval.nodes.simulation.users.scenario import SimulatedTurn, SimulationRequest
from todeval.stores.checkpoint import open_checkpointer
from todeval.stores.llm_cache import LLMCache

GOAL = {
    "restaurant_name": "Sino",
    "location": "San Jose",
    "time": "11:30 am",
    "number_of_seats": "2",
    "date": "today",
}
# Wrong city, no time, no party size.
RESPONSE = "Confirming: a table at Sino in San Francisco today."
L = ["location", "time", "number_of_seats"]
ITEM: dict[str, Any] = {
    "context": [{"speaker": "user", "utterance": "Hi again, it's about the table at Sino."}],
    "task_goal": GOAL,
    "response": RESPONSE,
    "intent": "ReserveRestaurant",
}
SPEC = "openai:gpt-4o-mini"


def run(persona: dict[str, Any] | None = None, **context: Any) -> dict[str, Any]:
    item = ITEM if persona is None else {**ITEM, "persona": persona}
    out: dict[str, Any] = graph.invoke(item, context=Context().with_flat(context))
    return out


def test_missing_or_wrong_slots_are_the_gold_values_the_response_does_not_state() -> None:
    supervisor = SUPERVISOR.judge("local")
    found = supervisor.missing_or_wrong(RESPONSE, GOAL, ())
    assert found.value == L and found.judge == "local"
    # Paraphrased values count as stated.
    right = "A table for two at Sino in San Jose today at 11:30 in the morning?"
    assert supervisor.missing_or_wrong(right, GOAL, ()).value == []


def test_a_cooperative_user_resolves_everything_in_one_repair_turn() -> None:
    out = run()
    assert out["initial_missing"] == L and out["remaining"] == []
    assert out["success"] is True and out["reason"] is None
    assert (out["repair_turns"], out["dte"]) == (1, 2)
    agent, user = out["turns"]
    assert agent["speaker"] == "system" and agent["asked_slots"] == L
    assert "number of seats" in agent["utterance"] and "11:30" not in agent["utterance"]
    assert user["speaker"] == "user" and user["resolved_slots"] == L
    assert out["judges"] == {
        "supervisor_judge": "local",
        "repair_agent": "local",
        "user_simulator": "local",
    }


def test_a_correct_confirmation_needs_no_repair() -> None:
    out = graph.invoke(
        {**ITEM, "response": "A table for 2 at Sino in San Jose today at 11:30 am?"},
        context=Context(),
    )
    assert out["initial_missing"] == [] and out["turns"] == []
    assert (out["dte"], out["success"]) == (1, True)


def test_a_low_disclosure_user_takes_more_turns() -> None:
    high = run({"disclosure": "high"})
    for seed in range(4):
        low = run({"disclosure": "low", "seed": seed})
        assert low["success"] is True and low["dte"] <= 1 + MemorySettings().max_repair_turns
        assert low["repair_turns"] > high["repair_turns"]
        user_turns = [t for t in low["turns"] if t["speaker"] == "user"]
        assert all(len(t["revealed_slots"]) <= 1 for t in user_turns)
        assert low["user_persona"]["disclosure"] == "low"
    assert run({"disclosure": "low", "seed": 2}) == run({"disclosure": "low", "seed": 2})


def test_max_repair_turns_stops_an_agent_that_never_asks() -> None:
    out = run(repair_agent="local:passive", max_repair_turns=3)
    assert out["success"] is False and out["remaining"] == L
    assert (out["repair_turns"], out["dte"], len(out["turns"])) == (3, 4, 6)
    assert "max_repair_turns (3)" in (out["reason"] or "")
    none = run(max_repair_turns=0)
    assert (none["success"], none["dte"], none["turns"]) == (False, 1, [])


FLAGS_GOAL = {
    "to": "Sacramento",
    "trip_protection": "False",
    "shared_ride": "True",
    "subtitle_language": "None",
}


@pytest.mark.parametrize("disclosure", ["high", "medium", "low"])
def test_flag_values_are_repaired_whatever_the_users_disclosure(disclosure: str) -> None:
    # "The trip protection should be False." used to read as no mention of False: the loop
    # could never empty L for a goal holding a negative flag.
    item = {**ITEM, "task_goal": FLAGS_GOAL, "response": "A train to Sacramento?"}
    for seed in range(3):
        persona = {"disclosure": disclosure, "seed": seed}
        out = graph.invoke({**item, "persona": persona}, context=Context())
        assert out["initial_missing"] == ["trip_protection", "shared_ride", "subtitle_language"]
        assert out["success"] is True and out["remaining"] == []


def resolved(goal: dict[str, str], pending: list[str], asked: str, said: str) -> list[str] | None:
    """What the local supervisor makes of one exchange."""
    return MentionSupervisor().resolved(RepairExchange(goal, pending, asked, said)).value


def test_a_flag_is_settled_by_a_bare_yes_or_no_to_its_own_question_only() -> None:
    pending = ["trip_protection", "shared_ride"]
    ask = "Would you like trip protection?"
    assert resolved(FLAGS_GOAL, pending, ask, "No.") == ["trip_protection"]
    assert resolved(FLAGS_GOAL, pending, ask, "Yes please.") == []  # wrong
    both = "Would you like trip protection and a shared ride?"
    assert resolved(FLAGS_GOAL, pending, both, "No.") == []  # which one?
    # Asking about a flag does not choose it; saying it does.
    ride = "Would you like a shared ride?"
    assert resolved(FLAGS_GOAL, ["shared_ride"], ride, "Anything else?") == []
    said = "I don't want trip insurance but a shared ride is fine."
    assert resolved(FLAGS_GOAL, pending, both, said) == pending


class WrongValuesUser:
    """A user who answers every asked slot with a wrong value."""

    name = "local:test-wrong-values"

    def reply(self, request: SimulationRequest) -> SimulatedTurn:
        wrong = {slot: "7 pm" if slot == "time" else "Oakland" for slot in request.asked_slots}
        said = " ".join(f"The {slot} is {value}." for slot, value in wrong.items())
        return SimulatedTurn(utterance=said, revealed_slots=wrong, judge=self.name)


@register_local_judge(USER_SIMULATOR.name, "test-wrong-values")
def _wrong_values_user() -> WrongValuesUser:
    return WrongValuesUser()


def test_the_supervisor_keeps_a_slot_answered_with_a_wrong_value() -> None:
    ask = "Could you tell me the time?"
    assert resolved(GOAL, ["time"], ask, "The time should be 6 pm.") == []
    assert resolved(GOAL, ["time"], ask, "Half past 11 in the morning.") == ["time"]
    # A slot that is not pending is never reported, even if mentioned.
    assert resolved(GOAL, ["time"], ask, "In San Jose at 6 pm.") == []

    out = run(user_simulator="local:test-wrong-values", max_repair_turns=2)
    assert out["success"] is False and out["remaining"] == L
    assert all(t.get("resolved_slots") == [] for t in out["turns"] if t["speaker"] == "user")
    # The agent re-asks ("double-check") the slots the user answered wrongly.
    assert "double-check" in out["turns"][2]["utterance"]


def test_the_local_agent_confirms_settled_values_and_asks_the_rest() -> None:
    request = RepairRequest(
        context=[],
        response=RESPONSE,
        pending_slots=["number_of_seats"],
        last_user_values={"time": "11:30 am"},
        intent="ReserveRestaurant",
    )
    said = ProactiveAgent().speak(request)
    assert said.asked_slots == ["number_of_seats"]
    assert "the time is 11:30 am" in said.utterance
    assert "To reserve restaurant, could you tell me the number of seats?" in said.utterance


# -- LLM roles through a scripted model ---------------------------------------------------


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[ScriptedChatModel]:
    """One scripted model answers every role; fresh response cache; judges rebuilt."""
    cache = LLMCache(tmp_path / "llm_cache.sqlite")
    monkeypatch.setattr(llm_module, "default_llm_cache", lambda: cache)
    model = ScriptedChatModel()
    monkeypatch.setattr(llm_module, "load_chat_model", lambda spec, **kwargs: model)
    for role in (REPAIR_AGENT, SUPERVISOR, USER_SIMULATOR):
        role.cache_clear()
    yield model
    for role in (REPAIR_AGENT, SUPERVISOR, USER_SIMULATOR):
        role.cache_clear()


def llm_context(**overrides: Any) -> Context:
    return Context().with_flat(
        {
            "repair_agent": SPEC,
            "user_simulator": SPEC,
            "supervisor_judge": SPEC,
            "llm_max_retries": 1,
            **overrides,
        }
    )


def prompt_of(messages: list[BaseMessage]) -> str:
    return str(messages[-1].content)


def test_llm_agent_user_and_supervisor_repair_a_slot(scripted: ScriptedChatModel) -> None:
    scripted.script = [
        # The supervisor finds L; a slot outside the goal is dropped.
        '{"missing_or_wrong_slots": ["time", "parking"], "rationale": "no time given"}',
        # The agent: malformed JSON first, retried with feedback.
        'Sure! {"utterance": "What time would you like?", "asked_slots": ',
        json.dumps({"utterance": "What time would you like?", "asked_slots": ["time"]}),
        # The user.
        json.dumps(
            {
                "utterance": "Half past 11 in the morning. ###STOP###",
                "revealed_slots": {"time": "11:30 am", "mood": "hungry"},
                "stop": False,
            }
        ),
        # The supervisor resolves the exchange.
        '<think>the user gave the time</think>{"resolved_slots": ["time"], "rationale": "ok"}',
    ]
    out = graph.invoke(ITEM, context=llm_context())
    assert out["initial_missing"] == ["time"] and out["remaining"] == []
    assert (out["success"], out["dte"], out["repair_turns"]) == (True, 2, 1)
    agent, user = out["turns"]
    assert agent == {
        "speaker": "system",
        "utterance": "What time would you like?",
        "asked_slots": ["time"],
    }
    assert user["utterance"] == "Half past 11 in the morning."
    assert user["revealed_slots"] == {"time": "11:30 am"} and user["resolved_slots"] == ["time"]
    assert out["judges"] == dict.fromkeys(
        ("supervisor_judge", "repair_agent", "user_simulator"), SPEC
    )
    assert scripted.remaining == 0 and len(scripted.calls) == 5
    assert "could not be used" in prompt_of(scripted.calls[2])  # the retry carried feedback
    assert "[Unresolved Slots]\n- time (time)" in prompt_of(scripted.calls[4])


def test_a_supervisor_that_cannot_judge_leaves_success_unknown(
    scripted: ScriptedChatModel,
) -> None:
    scripted.script = [
        '{"missing_or_wrong_slots": ["time"]}',
        '{"utterance": "What time?", "asked_slots": []}',
        '{"utterance": "11:30 am.", "revealed_slots": {"time": "11:30 am"}}',
        "I think the time was resolved.",
        "Yes, resolved.",
    ]
    out = graph.invoke(ITEM, context=llm_context())
    assert out["success"] is None and out["dte"] is None
    assert out["remaining"] == ["time"] and len(out["turns"]) == 2
    assert "supervisor could not judge" in (out["reason"] or "")
    # The agent listed no slots, so they were read from its words.
    assert out["turns"][0]["asked_slots"] == ["time"]


def test_a_repair_thread_is_checkpointed(tmp_path: Path) -> None:
    path = tmp_path / "checkpoints.sqlite"
    config: Any = {"configurable": {"thread_id": "item-1"}}
    with open_checkpointer(path) as saver:
        compiled = build_slot_repair_graph().compile(checkpointer=saver)
        out = compiled.invoke(
            {**ITEM, "persona": {"disclosure": "medium"}}, config, context=Context()
        )
    with open_checkpointer(path) as saver:
        reopened = build_slot_repair_graph().compile(checkpointer=saver)
        state = reopened.get_state(config)
        history = list(reopened.get_state_history(config))
    assert out["success"] is True and out["repair_turns"] == 2
    assert state.next == () and state.values["turns"] == out["turns"]
    assert state.values["dte"] == out["dte"] == 3
    steps = [snapshot.next for snapshot in history]
    assert ("supervise",) in steps and ("score_repair",) in steps
    assert sum(step == ("agent_turn",) for step in steps) == 2
