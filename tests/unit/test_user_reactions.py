"""The local task user's reactions to failed agent turns, and their measurement (issue 29, 5)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scripts.user_reactions import measure, reaction
from tests.unit.test_task_user import ACB, TASK, Conversation
from todeval.nodes.goal_success.judges.user_cues import (
    ABANDONMENT,
    NEGATIVE_FEEDBACK,
    POSITIVE_FEEDBACK,
)
from todeval.nodes.simulation import users
from todeval.nodes.simulation.users.chat import ChatTurn, read_chat
from todeval.nodes.simulation.users.failures import agent_turns, turn_failure
from todeval.nodes.simulation.users.simulator import task_goal_trace, task_user_reply
from todeval.nodes.simulation.users.task import TaskScenario
from todeval.nodes.simulation.users.tones import FAILURE_GIVE_UPS, PUSH_BACKS

RUN40 = ACB / "simulations" / "banking_gpt-4.1_run40.json"
SINGLE: dict[str, Any] = {
    **TASK,
    "user_scenario": {
        **TASK["user_scenario"],
        "goal_shifts": {"required_shifts": 0, "goals": ["authentication"]},
    },
}


def last_failure(messages: list[dict[str, Any]]) -> str | None:
    turns = agent_turns(read_chat(messages))
    return turn_failure(turns[-1][1]) if turns else None


def test_each_failure_is_read_from_the_agents_turn() -> None:
    talk = Conversation()
    talk.user()
    talk.agent("")
    assert last_failure(talk.messages) == "ignored"  # said nothing, called nothing
    talk.messages[-1]["content"] = talk.messages[-2]["content"]
    assert last_failure(talk.messages) == "ignored"  # parrots the user
    talk.messages[-1]["content"] = "Done! I have completed everything you asked."
    assert last_failure(talk.messages) == "false_success"  # no tool result shows it
    talk.user()
    talk.agent("Done! I have completed everything you asked.")
    assert last_failure(talk.messages) == "repeated"


@pytest.mark.parametrize(
    "text",
    [
        "Could you give me your phone number?",  # asks
        "Your card is now locked.",  # after the lock_card call below succeeded
        "I will lock the card once you confirm.",  # speaks of what will happen
        "I'm sorry, the lock has not been completed: the system failed.",  # says it could not
    ],
)
def test_an_agent_that_works_or_says_it_could_not_has_not_failed(text: str) -> None:
    talk = Conversation()
    talk.user()
    talk.agent("Let me lock it.", call="lock_card")
    talk.user()
    talk.agent(text)
    assert last_failure(talk.messages) is None


def test_a_false_success_gets_push_back_and_the_request_again_then_the_next_goal() -> None:
    talk = Conversation(seed=5)
    talk.user()
    talk.agent("Done! I have completed everything you asked.")
    again = talk.user()
    assert not again.goal_shift and again.goal_index == 0 and not again.stop
    assert again.utterance.startswith(PUSH_BACKS["false_success"])
    assert NEGATIVE_FEEDBACK.search(again.utterance) and "log" in again.utterance.lower()
    talk.agent("Done! I have completed everything you asked.")
    moved = talk.user()
    assert moved.goal_shift and moved.goal_index == 1 and not moved.stop
    assert moved.utterance.startswith(PUSH_BACKS["repeated"])
    assert (moved.progress_reason or "").startswith("the agent failed: 2 turn(s)")


def test_on_the_last_goal_the_user_gives_up_and_the_stop_says_so() -> None:
    talk = Conversation(SINGLE, seed=1)
    talk.user()
    talk.agent("")
    assert not talk.user().stop
    talk.agent("")
    gave_up = talk.user()
    assert gave_up.stop and gave_up.stop_token == "###STOP###"
    assert (gave_up.progress_reason or "").startswith("gave up")
    assert gave_up.utterance.startswith(PUSH_BACKS["ignored"])
    assert gave_up.utterance.endswith(FAILURE_GIVE_UPS) and ABANDONMENT.search(gave_up.utterance)
    # A served goal stops with thanks, never with a give-up.
    served = Conversation(SINGLE, seed=1)
    served.user()
    served.agent("Found you.", call="get_customer_by_phone")
    done = served.user()
    assert done.stop and not ABANDONMENT.search(done.utterance)
    assert not (done.progress_reason or "").startswith("gave up")
    # The trace read back from the transcript agrees.
    trace = task_goal_trace(TaskScenario.from_task(SINGLE), talk.messages)
    assert [step.stop for _, step in trace] == [False, False, True]


def test_the_number_of_failed_turns_before_leaving_is_the_scenarios() -> None:
    patient = TaskScenario(
        **{**TaskScenario.from_task(SINGLE).__dict__, "failed_turns_to_leave": 2}
    )
    hasty = TaskScenario(**{**patient.__dict__, "failed_turns_to_leave": 1})
    greeted = [{"role": "assistant", "content": "Hi!"}]
    opening = task_user_reply("local", task=hasty, messages=greeted, seed=2)
    once = [*greeted, {"role": "user", "content": opening.content}, {"role": "assistant"}]
    assert task_user_reply("local", task=hasty, messages=once, seed=2).stop
    messages: list[dict[str, Any]] = [{"role": "assistant", "content": "Hi!"}]
    replies = []
    for _ in range(3):
        reply = task_user_reply("local", task=patient, messages=messages, seed=2)
        replies.append(reply)
        messages += [
            {"role": "user", "content": reply.content},
            {"role": "assistant", "content": ""},
        ]
    _, second, third = replies
    assert not second.stop and second.utterance.startswith(PUSH_BACKS["ignored"])
    assert "log" in second.utterance.lower()  # the request again
    assert third.stop and (third.progress_reason or "").startswith("gave up")


def test_same_seed_same_reactions() -> None:
    def transcript(seed: int) -> list[str]:
        talk = Conversation(seed=seed)
        talk.user()
        for text in ("", "Done!", "Done! I have completed everything you asked."):
            talk.agent(text)
            talk.user()
        return [r.content for r in talk.replies]

    assert transcript(4) == transcript(4)
    assert any(transcript(seed) != transcript(4) for seed in range(5, 12))


def test_reactions_are_classified_as_the_measurement_reads_them() -> None:
    assert reaction("That's not true: it isn't done.", "Please lock my card.") == "push_back"
    assert reaction("Forget it, I give up. ###STOP###", "Please lock my card.") == "give_up"
    assert reaction("Please lock my card now.", "Please lock my card.") == "repeat"
    assert reaction("Also, what is my balance?", "Please lock my card.") == "move_on"


def test_a_turn_that_failed_is_answered_with_its_reaction_in_the_tally() -> None:
    messages = [
        {"role": "assistant", "content": "Hi!"},
        {"role": "user", "content": "Please lock my card."},
        {"role": "assistant", "content": "Done! I have completed everything you asked."},
        {"role": "user", "content": "That's not true: nothing went through."},
        {"role": "assistant", "content": "Could you give me the card number?"},
        {"role": "user", "content": "It ends in 1234. ###STOP###"},
    ]
    figures = measure([{"messages": messages}])
    assert figures["failures"]["false_success"] == 1 and figures["failed_turns"] == 1
    assert figures["after_failed"]["push_back"] == 1.0
    assert figures["after_ok"]["give_up"] == 1.0


@pytest.mark.skipif(not RUN40.is_file(), reason="the recorded AgentChangeBench run is not here")
def test_a_good_recorded_agent_rarely_fails_by_these_rules() -> None:
    simulations = json.loads(RUN40.read_text())["simulations"]
    figures = measure(simulations)
    assert figures["agent_turns"] == 241
    # GPT-4.1's turns: only its repeated hand-over announcements count as failed.
    assert figures["failed_turns"] == figures["failures"]["repeated"] <= 3
    loops = [
        turn.text
        for s in simulations
        for _, turn in agent_turns(read_chat(s["messages"]))
        if turn_failure(turn)
    ]
    assert all("TRANSFERRED" in text for text in loops)


def test_the_chat_of_a_failed_turn_keeps_its_tool_results() -> None:
    chat = read_chat(
        [
            {"role": "user", "content": "Lock my card please."},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c", "name": "lock_card"}],
            },
            {"role": "tool", "id": "c", "content": "Error: no card", "error": True},
            {"role": "assistant", "content": "Your card has been locked."},
        ]
    )
    [(index, turn)] = agent_turns(chat)
    assert index == len(chat) and turn.calls == ("lock_card",) and turn.succeeded == ()
    assert turn_failure(turn) == "false_success"
    assert isinstance(chat[0], ChatTurn)


@pytest.mark.skipif(not RUN40.is_file(), reason="the recorded AgentChangeBench run is not here")
def test_the_shipped_reaction_figures_are_the_recorded_runs() -> None:
    shipped = json.loads((Path(users.__file__).parent / "reactions.json").read_text())
    recorded = shipped["runs"][RUN40.name]
    assert recorded == json.loads(json.dumps(measure(json.loads(RUN40.read_text())["simulations"])))
    floors = [name for name in shipped["runs"] if "floor_done" in name]
    assert len(floors) == 3  # one per domain
    for name in floors:  # every turn of an agent that only claims success fails
        run = shipped["runs"][name]
        assert run["failed_turns"] == run["agent_turns"] > 0
        assert run["after_failed"]["move_on"] == 0.0


@pytest.mark.parametrize(("kind", "said"), [(k, s) for k, p in PUSH_BACKS.items() for s in p])
def test_every_push_back_reads_as_negative_feedback_to_the_judges(kind: str, said: str) -> None:
    assert NEGATIVE_FEEDBACK.search(said), kind
    assert reaction(said, "I need to lock my card.") == "push_back"


@pytest.mark.parametrize("said", FAILURE_GIVE_UPS)
def test_every_give_up_reads_as_abandonment_never_as_thanks(said: str) -> None:
    assert ABANDONMENT.search(said) and not POSITIVE_FEEDBACK.search(said)
