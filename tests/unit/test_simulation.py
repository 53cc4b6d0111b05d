"""The reusable user simulator: local templates shaped by a persona, and the LLM backend."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import todeval.nodes.judges.llm as llm_module
from tests.fakes import ScriptedChatModel
from todeval.evals.memory_schema import MsTodTurn
from todeval.evals.metrics.memory.scores import slot_value_mentioned
from todeval.nodes.judges.spec import JudgeSpecError, parse_spec
from todeval.nodes.simulation.roles import USER_SIMULATOR
from todeval.nodes.simulation.users.scenario import GoalShift, Persona, SimulatedTurn, UserScenario
from todeval.nodes.simulation.users.simulator import UserSimulator
from todeval.nodes.simulation.users.words import slots_asked_about
from todeval.stores.llm_cache import LLMCache

GOAL = {
    "restaurant_name": "Sino",
    "location": "San Jose",
    "time": "11:30 am",
    "number_of_seats": "2",
    "date": "today",
}
L = ["location", "time", "number_of_seats"]
HISTORY = [
    MsTodTurn(speaker="user", utterance="Hi again, it's about the table at Sino."),
    MsTodTurn(speaker="system", utterance="A table at Sino in San Francisco today?"),
    MsTodTurn(speaker="system", utterance="Could you tell me the location, time and seats?"),
]


def simulator(**persona: Any) -> UserSimulator:
    return UserSimulator(UserScenario(task_goal=GOAL, focus_slots=L), persona=Persona(**persona))


def test_a_cooperative_user_states_every_asked_value() -> None:
    turn = simulator().reply(HISTORY, asked_slots=L)
    assert turn.ok and turn.judge == "local"
    assert turn.revealed_slots == {slot: GOAL[slot] for slot in L}
    assert all(slot_value_mentioned(GOAL[s], turn.utterance, slot=s) for s in L)
    # Nothing unasked leaks out of a user who answers only what is asked.
    assert "Sino" not in turn.utterance


def test_disclosure_caps_the_details_per_reply() -> None:
    medium = simulator(disclosure="medium").reply(HISTORY, asked_slots=L)
    assert medium.revealed_slots == {"location": "San Jose", "time": "11:30 am"}
    lows = [
        simulator(disclosure="low", seed=seed).reply(HISTORY, asked_slots=L, turn_index=i)
        for seed in range(6)
        for i in range(3)
    ]
    assert all(len(turn.revealed_slots) <= 1 for turn in lows)
    # Some low-disclosure replies push back with no value at all, others give one.
    assert any(not t.revealed_slots for t in lows) and any(t.revealed_slots for t in lows)


def test_replies_are_reproducible_and_the_seed_varies_them() -> None:
    def replies(seed: int) -> list[str]:
        user = simulator(disclosure="low", seed=seed)
        return [user.reply(HISTORY, asked_slots=L, turn_index=i).utterance for i in range(4)]

    assert replies(7) == replies(7)
    assert any(replies(seed) != replies(7) for seed in range(3))


def test_cooperativeness_decides_whether_open_slots_are_volunteered() -> None:
    quiet = simulator().reply(HISTORY, asked_slots=[])
    assert quiet.revealed_slots == {} and quiet.ok and not quiet.stop
    forthcoming = simulator(answers_only_asked=False).reply(
        HISTORY, asked_slots=[], open_slots=["time"]
    )
    assert forthcoming.revealed_slots == {"time": "11:30 am"}


def test_verbosity_changes_the_wording_not_the_values() -> None:
    terse = simulator(verbosity="terse").reply(HISTORY, asked_slots=["time"])
    verbose = simulator(verbosity="verbose").reply(HISTORY, asked_slots=["time"])
    assert terse.revealed_slots == verbose.revealed_slots == {"time": "11:30 am"}
    assert len(terse.utterance.split()) < len(verbose.utterance.split())
    assert slot_value_mentioned("11:30 am", terse.utterance)


def test_a_slot_outside_the_goal_gets_no_invented_value() -> None:
    turn = simulator().reply(HISTORY, asked_slots=["has_live_music"])
    assert turn.revealed_slots == {}
    assert "no preference" in turn.utterance and "has live music" in turn.utterance


def test_nothing_left_open_ends_the_dialogue() -> None:
    turn = simulator().reply(HISTORY, asked_slots=[], open_slots=[])
    assert turn.stop and turn.revealed_slots == {}


def test_a_goal_shift_is_announced_on_its_turn_and_stays_in_force() -> None:
    scenario = UserScenario(
        task_goal=GOAL, goal_shifts=[GoalShift(at_turn=1, updates={"time": "7 pm"})]
    )
    user = UserSimulator(scenario)
    before = user.reply(HISTORY, asked_slots=["time"], turn_index=0)
    at = user.reply(HISTORY, asked_slots=[], turn_index=1)
    after = user.reply(HISTORY, asked_slots=["time"], turn_index=2)
    assert before.revealed_slots == {"time": "11:30 am"} and not before.goal_shift
    assert at.goal_shift and at.revealed_slots == {"time": "7 pm"} and "7 pm" in at.utterance
    assert after.revealed_slots == {"time": "7 pm"} and not after.goal_shift
    assert scenario.goal_at(0)["time"] == "11:30 am" and scenario.goal_at(5)["time"] == "7 pm"


def test_slots_asked_about_reads_slot_names_from_words() -> None:
    slots = ["restaurant_name", "time", "number_of_seats", "date"]
    assert slots_asked_about("How many seats, and at what time?", slots) == [
        "time",
        "number_of_seats",
    ]
    assert slots_asked_about("Which date works for you?", slots) == ["date"]
    # A generic word alone ("name", "number") does not name a slot.
    assert slots_asked_about("What name and number should I use?", slots) == []


def test_bad_personas_and_specs_fail_early() -> None:
    with pytest.raises(ValueError, match="disclosure"):
        Persona(disclosure="grumpy")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Persona.from_mapping({"patience": "low"})
    with pytest.raises(JudgeSpecError):
        USER_SIMULATOR.judge("local:nope")


# -- the LLM simulator ------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _fresh_llm_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    cache = LLMCache(tmp_path / "llm_cache.sqlite")
    monkeypatch.setattr(llm_module, "default_llm_cache", lambda: cache)


def llm_user(model: ScriptedChatModel, persona: Persona, max_retries: int = 1) -> UserSimulator:
    backend = USER_SIMULATOR.llm_judge(
        parse_spec("openai:gpt-4o-mini"), max_retries=max_retries, chat_model=model, cache=None
    )
    return UserSimulator(
        UserScenario(task_goal=GOAL, focus_slots=L), persona=persona, backend=backend
    )


def test_the_llm_simulator_reads_its_answer_and_drops_invented_slots() -> None:
    answer = {
        "utterance": "It's San Jose, at 11:30 am. ###STOP###",
        "revealed_slots": {"location": "San Jose", "time": "11:30 am", "parking": "yes"},
        "stop": False,
    }
    model = ScriptedChatModel([f"<think>answer both</think>{json.dumps(answer)}"])
    turn = llm_user(model, Persona(disclosure="low", style="Curt.")).reply(
        HISTORY, asked_slots=["location", "time"]
    )
    assert turn == SimulatedTurn(
        utterance="It's San Jose, at 11:30 am.",
        revealed_slots={"location": "San Jose", "time": "11:30 am"},
        stop=True,
        judge="openai:gpt-4o-mini",
    )
    prompt = str(model.calls[0][-1].content)
    assert "Disclosure: low" in prompt and "Curt." in prompt
    assert "number of seats" in prompt and "Could you tell me the location" in prompt


def test_the_llm_simulator_retries_malformed_json_then_gives_up_with_a_reason() -> None:
    good = json.dumps({"utterance": "Two people.", "revealed_slots": {"number_of_seats": "2"}})
    model = ScriptedChatModel(['{"utterance": "Two people.", "revealed_slots": ', good])
    turn = llm_user(model, Persona()).reply(HISTORY, asked_slots=["number_of_seats"])
    assert turn.revealed_slots == {"number_of_seats": "2"} and len(model.calls) == 2

    broken = ScriptedChatModel(fallback="Sure, two people!")
    failed = llm_user(broken, Persona(), max_retries=2).reply(HISTORY, asked_slots=["time"])
    assert not failed.ok and failed.revealed_slots == {}
    assert failed.reason is not None and "no JSON" in failed.reason
    assert len(broken.calls) == 3
