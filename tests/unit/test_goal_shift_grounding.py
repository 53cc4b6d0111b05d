"""Made-up arguments and the calls that serve a task (issue 29): what TUE, GSRT and the local
NL-assertion judge count as the agent working on the task."""

from __future__ import annotations

from typing import Any

from todeval.evals.goal_shift_schema import Message, ToolCall
from todeval.evals.metrics.goal_shift.grounding import identifiers, made_up, serving_calls
from todeval.evals.metrics.goal_shift.tool_use import (
    serves_task,
    tool_call_records,
    tool_usage_efficiency,
    tue_not_applicable,
)


def turn(n: int, role: str, content: str = "", **extra: Any) -> Message:
    return Message.model_validate({"turn": n, "role": role, "content": content, **extra})


def calling(n: int, call_id: str, name: str, arguments: dict[str, Any]) -> Message:
    return turn(n, "assistant", tool_calls=[ToolCall(id=call_id, name=name, arguments=arguments)])


USER = turn(1, "user", "Hi, I'm Maria Santos, phone +1 555-123-4567. Please lock my card.")


def test_identifiers_are_short_strings_and_free_text_is_not() -> None:
    arguments = {"customer_id": "cust_101", "n": 3, "flag": True, "summary": "a long free text"}
    assert list(identifiers(arguments)) == ["cust101"]
    assert list(identifiers({"full_name": "Maria Santos", "ids": ["tx_1", "ab"]})) == [
        "mariasantos",
        "tx1",
    ]


def test_a_call_is_made_up_when_none_of_its_identifiers_was_said_or_returned() -> None:
    grounding = "mariasantos15551234567"
    said = ToolCall(id="1", name="get_customer_by_name", arguments={"full_name": "Maria Santos"})
    invented = ToolCall(id="2", name="get_customer_by_name", arguments={"full_name": "kwxlglrd"})
    computed = ToolCall(
        id="3", name="get_transactions", arguments={"phone": "+15551234567", "since": "2025-01-01"}
    )
    assert not made_up(said, grounding) and made_up(invented, grounding)
    assert not made_up(computed, grounding)  # one grounded identifier is enough
    assert not made_up(ToolCall(id="4", name="list_all_airports", arguments={}), grounding)


def test_hand_overs_made_up_calls_and_unasked_listings_do_not_serve_the_task() -> None:
    messages = [
        turn(0, "assistant", "Hi!"),
        USER,
        calling(2, "t", "transfer_to_human_agents", {"summary": "Customer wants a card lock"}),
        turn(3, "tool", "Transfer successful", tool_call_id="t"),
        calling(4, "m", "lock_card", {"card_id": "zz81qpx0"}),
        turn(5, "tool", "Error: card not found", tool_call_id="m", error=True),
        calling(6, "l", "list_all_airports", {}),
        turn(7, "tool", "[]", tool_call_id="l"),
    ]
    assert serving_calls(messages) == set()
    records = tool_call_records(messages, None)
    assert not serves_task(records) and tue_not_applicable([records]) == 1
    grounded = [
        *messages,
        calling(8, "g", "get_customer_by_phone", {"phone_number": "+15551234567"}),
        turn(9, "tool", '{"customer_id": "cust_101", "card_id": "card_7"}', tool_call_id="g"),
        calling(10, "c", "lock_card", {"card_id": "card_7"}),  # an id a tool returned
    ]
    assert serving_calls(grounded) == {"g", "c"}
    # With the task's tools known, a no-argument listing serves only if the task allows it.
    assert serving_calls(messages, {"list_all_airports"}) == {"l"}
    records = tool_call_records(grounded, None)
    assert serves_task(records) and tue_not_applicable([records]) == 0
    usage = tool_usage_efficiency(records)
    assert usage.calls == 5  # TUE keeps Eq. 2 over every call of a conversation that works


def test_a_listing_the_user_asked_about_serves_the_task() -> None:
    asked = [
        turn(0, "assistant", "Hi!"),
        turn(1, "user", "Which airports do you fly from?"),
        calling(2, "l", "list_all_airports", {}),
    ]
    assert serving_calls(asked) == {"l"}
