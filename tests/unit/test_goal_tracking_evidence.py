"""Goal tracking's Completed needs evidence on tool-using transcripts (issue 29 item 2).

A goal that needs an action is completed on a tool call for it that answered without an error,
or on the user's word that it was done; never on the agent's claim alone, an echo of the user
or a hand-over. Dialogues without tool calls keep the cues they had.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import count
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from todeval.evals.datasets.goal_tracking import service_calls, with_service_calls
from todeval.evals.goal_shift_schema import Conversation, Message, ToolCall
from todeval.evals.goal_tracking_schema import AtodDialogue, AtodTurn
from todeval.evals.record_views import conversation_record, tracker_utterances
from todeval.evals.schema import Dialogue, Turn
from todeval.graphs.goal_tracking import build_goal_tracking_graph
from todeval.nodes.context import Context
from todeval.nodes.goal_tracking.evidence import (
    completion_evidence,
    database_call,
    grounded,
    is_echo,
    is_tool_evidence,
    needs_action,
    user_confirms_done,
)
from todeval.nodes.goal_tracking.tracker import goal_memory

ASK = "Hi, I need to dispute the charge tx_101 on my account, I don't recognize it."
CLAIM = "Done! I have completed everything you asked."
FILED = "Your dispute has been filed."
DISPUTE = {
    "tool": "file_dispute",
    "arguments": {"tx_id": "tx_101"},
    "error": False,
    "result": '{"dispute_id": "D1"}',
}
_THREADS = count()


@pytest.fixture
def context() -> Iterator[Context]:
    yield Context(
        settings={"goal_tracking": {"goal_memory_path": ":memory:", "vector_backend": "memory"}}
    )
    goal_memory.cache_clear()


def _user(text: str) -> dict[str, Any]:
    return {"speaker": "USER", "text": text}


def _system(text: str, *actions: dict[str, Any]) -> dict[str, Any]:
    return {"speaker": "SYSTEM", "text": text, "actions": list(actions)}


def _statuses(utterances: list[dict[str, Any]], context: Context) -> list[str]:
    graph = build_goal_tracking_graph().compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": f"t{next(_THREADS)}"}}
    output = graph.invoke(
        {"dialogue_id": "d", "utterances": utterances, "final": True}, config, context=context
    )
    return [goal["status"] for goal in output["goals"]]


def test_a_claim_alone_does_not_complete_the_goal_it_fails_it(context: Context) -> None:
    assert _statuses([_user(ASK), _system(CLAIM)], context) == ["failed"]


def test_a_successful_tool_call_for_the_goal_completes_it(context: Context) -> None:
    assert _statuses([_user(ASK), _system(FILED, DISPUTE)], context) == ["completed"]


def test_a_tool_call_that_returned_an_error_completes_nothing(context: Context) -> None:
    failed = DISPUTE | {"error": True, "result": "Error: transaction not found"}
    assert _statuses([_user(ASK), _system(FILED, failed)], context) == ["failed"]


def test_a_call_with_made_up_arguments_is_no_evidence(context: Context) -> None:
    made_up = DISPUTE | {"arguments": {"tx_id": "q8x7k2mz"}}
    assert _statuses([_user(ASK), _system(FILED, made_up)], context) == ["failed"]


def test_a_hand_over_to_a_person_is_no_evidence(context: Context) -> None:
    transfer = {
        "tool": "transfer_to_human_agents",
        "arguments": {"summary": "dispute tx_101"},
        "error": False,
        "result": "Transfer successful",
    }
    assert _statuses([_user(ASK), _system(CLAIM, transfer)], context) == ["failed"]


def test_the_users_confirmation_completes_a_claimed_goal(context: Context) -> None:
    said = [_user(ASK), _system(CLAIM), _user("Great, I can see it went through now. Thanks!")]
    assert _statuses(said, context) == ["completed"]


def test_evidence_after_the_claim_completes_the_goal_at_the_end(context: Context) -> None:
    said = [_user(ASK), _system(CLAIM), _user("Really?"), _system("One moment.", DISPUTE)]
    assert _statuses(said, context) == ["completed"]


def test_an_echo_of_the_user_settles_nothing(context: Context) -> None:
    assert _statuses([_user(ASK), _system(ASK)], context) == ["open"]


def test_without_tool_calls_the_system_word_still_completes(context: Context) -> None:
    # No ``actions``: an SGD-, MultiWOZ-like dialogue; its cues work as before.
    said = [_user(ASK), {"speaker": "SYSTEM", "text": CLAIM}]
    assert _statuses(said, context) == ["completed"]


def test_an_echo_is_no_answer_even_without_tools(context: Context) -> None:
    said = [_user(ASK), {"speaker": "SYSTEM", "text": ASK}]
    assert _statuses(said, context) == ["open"]


@pytest.mark.parametrize(
    ("text", "confirms"),
    [
        ("Great, I can see it went through now. Thanks!", True),
        ("Perfect, that worked.", True),
        ("I've received the code, thanks.", True),
        ("It still hasn't gone through.", False),
        ("That didn't work.", False),
        ("Please confirm it has been done.", False),  # asks; the cue needs the user's report
        ("Let me know once it has been processed.", False),
        ("Has it gone through?", False),
        ("Thank you for explaining that.", False),
    ],
)
def test_the_user_confirms_only_in_so_many_words(text: str, confirms: bool) -> None:
    assert user_confirms_done(text) is confirms


def test_an_echo_is_a_reply_with_the_users_words() -> None:
    history = [
        {"turn": 1, "speaker": "USER", "text": ASK},
        {"turn": 2, "speaker": "SYSTEM", "text": ASK.upper()},
    ]
    assert is_echo(history[1], history)
    assert is_echo({"turn": 2, "speaker": "SYSTEM", "text": "  "}, history)
    assert not is_echo({"turn": 2, "speaker": "SYSTEM", "text": FILED}, history)
    assert not is_echo(history[0], history)  # the user is never an echo


def test_arguments_are_grounded_by_the_users_words_or_an_earlier_result() -> None:
    lookup = {"tool": "get_customer", "arguments": {"name": "Riley Brown"}, "error": False,
              "result": '[{"account_id": "acc_505"}]'}  # fmt: skip
    later = {"tool": "get_statements", "arguments": {"account_id": "acc_505"}, "error": False,
             "result": "[]"}  # fmt: skip
    history = [
        {"turn": 1, "speaker": "USER", "text": "I'm Riley Brown."},
        {"turn": 2, "speaker": "SYSTEM", "text": "Found you.", "actions": [lookup, later]},
    ]
    assert grounded(lookup, history, 2) and grounded(later, history, 2)
    assert is_tool_evidence(later, history, 2)  # an empty list is the search's answer
    made_up = later | {"arguments": {"account_id": "acc_999"}}
    assert not grounded(made_up, history, 2)
    assert not grounded(later | {"arguments": {}}, history, 2)  # no arguments, nothing grounded
    assert completion_evidence(history, 1, 2) == "tool get_customer"


def test_a_goal_needs_an_action_when_it_asks_for_one_or_for_the_users_records() -> None:
    assert needs_action("dispute a charge on my account", None)
    assert needs_action("check my account balances", None)
    assert not needs_action("walk me through how to set up e-statements", None)
    assert not needs_action("know exactly what budgeting tools you offer", None)
    assert needs_action("anything", True) and not needs_action("book a table", False)


def test_an_sgd_call_is_evidence_for_its_own_intent_only() -> None:
    history = [
        {"turn": 1, "speaker": "USER", "text": "Book Sino for two."},
        {"turn": 2, "speaker": "SYSTEM", "text": "Booked.",
         "actions": service_calls([{"svc": "Restaurants_2",
                                    "call": ["ReserveRestaurant", {"restaurant_name": "Sino"}]}])},
    ]  # fmt: skip
    assert completion_evidence(history, 1, 2, "ReserveRestaurant") == "tool ReserveRestaurant"
    assert completion_evidence(history, 1, 2, "GetRide") is None


def _conversation() -> Conversation:
    return Conversation(
        dialogue_id="c1",
        task_id="t1",
        messages=[
            Message(turn=0, role="assistant", content="Hi! How can I help?"),
            Message(turn=1, role="user", content=ASK),
            Message(turn=2, role="assistant", tool_calls=[
                ToolCall(id="k1", name="file_dispute", arguments={"tx_id": "tx_101"})]),
            Message(turn=3, role="tool", tool_call_id="k1", content='{"dispute_id": "D1"}'),
            Message(turn=4, role="assistant", content=FILED),
            Message(turn=5, role="user", content="Thanks!"),
            Message(turn=6, role="assistant", content="Anything else?"),
        ],
    )  # fmt: skip


def test_a_transcripts_tracker_utterances_carry_the_calls_and_their_results() -> None:
    utterances = tracker_utterances(conversation_record(_conversation()))
    assert [(u["speaker"], u["text"]) for u in utterances] == [
        ("USER", ASK), ("SYSTEM", FILED), ("USER", "Thanks!"), ("SYSTEM", "Anything else?"),
    ]  # fmt: skip
    assert utterances[1]["actions"] == [DISPUTE]
    assert utterances[3]["actions"] == []  # the tools were there to use; none was
    assert "actions" not in utterances[0]


def test_sgd_gold_carries_each_system_turns_service_calls() -> None:
    frames = [{"svc": "Restaurants_2", "act": [["NOTIFY_SUCCESS", "", []]],
               "call": ["ReserveRestaurant", {"restaurant_name": "Sino"}]}]  # fmt: skip
    dialogue = Dialogue(
        dialogue_id="s1",
        turns=[
            Turn(turn_number=1, user_msg="Book Sino.", response="Booked.",
                 metadata={"sgd_system_frames": frames}),
            Turn(turn_number=2, user_msg="Thanks.", response="Bye.",
                 metadata={"sgd_system_frames": []}),
        ],
    )  # fmt: skip
    gold = AtodDialogue(
        dialogue_id="s1",
        turns=[
            AtodTurn(turn_id=i + 1, speaker=speaker, utterance=text)
            for i, (speaker, text) in enumerate(
                [("USER", "Book Sino."), ("SYSTEM", "Booked."), ("USER", "Thanks."),
                 ("SYSTEM", "Bye.")]
            )
        ],
    )  # fmt: skip
    turns = with_service_calls(gold, dialogue).turns
    assert [(turn.model_extra or {}).get("actions") for turn in turns] == [
        None, service_calls(frames), None, [],
    ]  # fmt: skip
    assert service_calls(frames)[0]["intent"] == "ReserveRestaurant"


def test_a_claim_made_with_the_services_own_call_is_about_that_calls_goal() -> None:
    call = service_calls([{"svc": "RentalCars_1", "call": ["ReserveCar", {}]}])
    assert database_call({"turn": 2, "speaker": "SYSTEM", "text": "Booked.", "actions": call})
    assert not database_call({"turn": 2, "speaker": "SYSTEM", "text": CLAIM, "actions": []})
    assert not database_call(None)
