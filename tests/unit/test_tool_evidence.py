"""Turns a transcript shows failed: an echo, an empty reply, a hand-over with nothing done, a
claimed action with no tool call behind it (issue 29 item 2), and what a dialogue without tools
is spared."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from todeval.cli.main import main
from todeval.evals.goal_shift_schema import (
    ActionSet,
    AllowedTool,
    Conversation,
    Message,
    TaskSpec,
    ToolCall,
)
from todeval.evals.record_views import conversation_record
from todeval.evals.schema import Dialogue
from todeval.nodes.goal_success.judges.turn_quality import certain_failures
from todeval.nodes.goal_success.judges.turn_quality.local_signals import complaints, repeats
from todeval.nodes.goal_success.judges.turn_quality.tool_evidence import (
    action_claim,
    served_turns,
)
from todeval.nodes.goal_success.voting import vote_turn

LOCK = ActionSet(action_id="lock", allowed_tools=[AllowedTool(function_name="lock_card")])


def transcript(*messages: Message, actions: bool = True) -> Dialogue:
    """The dialogue view of a banking transcript (a task that expects a card lock)."""
    task = TaskSpec(task_id="t1", action_sets=[LOCK] if actions else [])
    said = [Message(turn=0, role="assistant", content="Hi! How can I help?"), *messages]
    for turn, message in enumerate(said):
        message.turn = turn
    conversation = Conversation(dialogue_id="c1", task_id="t1", messages=said, task=task)
    return conversation_record(conversation).dialogue


def user(text: str) -> Message:
    return Message(turn=0, role="user", content=text)


def agent(text: str = "", *calls: str, arguments: dict[str, Any] | None = None) -> Message:
    made = [ToolCall(id=f"call-{name}", name=name, arguments=arguments or {}) for name in calls]
    return Message(turn=0, role="assistant", content=text, tool_calls=made)


def result(name: str, *, error: bool = False) -> Message:
    content = "Error: card not found" if error else '{"status": "ok"}'
    return Message(turn=0, role="tool", tool_call_id=f"call-{name}", content=content, error=error)


def plain(*pairs: tuple[str, str]) -> Dialogue:
    """A dialogue with no tool channel (SGD, MultiWOZ, a chat log)."""
    return Dialogue.model_validate(
        {
            "dialog_id": "d1",
            "turns": [
                {"turn_number": i, "user_msg": u, "response": r}
                for i, (u, r) in enumerate(pairs, start=1)
            ],
        }
    )


def codes(dialogue: Dialogue) -> list[str | None]:
    return [found[0] if found else None for found in certain_failures(dialogue)]


def test_a_reply_that_only_echoes_the_user_fails_with_or_without_tools() -> None:
    ask = "I want to lock my card, I lost it."
    assert codes(transcript(user(ask), agent(ask))) == ["E1"]
    assert codes(plain((ask, ask.upper()))) == ["E1"]
    # a courtesy said back is not an echo, nor is an answer that quotes the request
    assert codes(plain(("Thank you!", "Thank you!"))) == [None]
    assert codes(plain((ask, f"Sure: {ask} Which card is it?"))) == [None]


def test_an_empty_reply_fails_but_a_user_who_spoke_twice_is_one_turn() -> None:
    assert codes(transcript(user("Lock my card."), agent(""))) == ["E5"]
    twice = transcript(
        user("Hi, I need help."),
        user("My card is lost, please lock it."),
        agent("", "lock_card"),
        result("lock_card"),
        agent("Your card has been locked."),
    )
    (turn,) = twice.turns
    assert turn.user_msg == "Hi, I need help. My card is lost, please lock it."
    assert turn.metadata["tool_results_ok"] == ["lock_card"]
    assert codes(twice) == [None]


def test_a_hand_over_with_nothing_done_fails() -> None:
    handed = transcript(
        user("Please lock my card."),
        agent("", "transfer_to_human_agents"),
        result("transfer_to_human_agents"),
        agent("I am transferring you to a human agent now."),
    )
    assert codes(handed) == ["E2"]
    said_only = transcript(
        user("Please lock my card."), agent("Please contact a human agent, they will help.")
    )
    assert codes(said_only) == ["E2"]
    # after the agent's own call came back, handing over is the agent's judgement
    looked_up = transcript(
        user("Please lock my card."),
        agent("", "get_customer_by_phone"),
        result("get_customer_by_phone"),
        agent("This needs a specialist; I am transferring you to a human agent."),
    )
    assert codes(looked_up) == [None]


def test_a_claimed_action_without_a_successful_tool_call_is_hallucinated_success() -> None:
    claimed = transcript(user("Please lock my card."), agent("Your card has been locked."))
    assert codes(claimed) == ["E3"]
    reason = certain_failures(claimed)[0]
    assert reason is not None and "hallucinated success" in reason[1]
    failed = transcript(
        user("Please lock my card."),
        agent("", "lock_card"),
        result("lock_card", error=True),
        agent("Done! Your card is locked."),
    )
    assert codes(failed) == ["E3"]  # the call came back with an error: nothing was done
    looked_up_only = transcript(
        user("Please lock my card."),
        agent("", "get_card"),
        result("get_card"),
        agent("I've locked your card."),
    )
    assert codes(looked_up_only) == ["E3"]  # a lookup is not the action
    done = transcript(
        user("Please lock my card."),
        agent("", "lock_card"),
        result("lock_card"),
        agent("Your card has been locked."),
        user("Thanks. Is it still locked?"),
        agent("Yes, I've locked it; it stays locked."),
    )
    assert codes(done) == [None, None]  # backed by the earlier call


def test_claims_are_statements_of_something_done() -> None:
    assert action_claim("Your card has now been locked.") == "Your card has now been locked."
    assert action_claim("Done! I have completed everything you asked.") == "Done!"
    assert action_claim("I\u2019ve sent the code to your phone.") is not None
    assert action_claim("Once your card has been locked, you will get an email.") is None
    assert action_claim("Would you like me to cancel it?") is None
    assert action_claim("Pending ones are those that have been authorized.") is None
    assert action_claim("I have located your profile.") is None


def test_without_a_tool_channel_only_the_echo_rule_reads_the_dialogue() -> None:
    sgd = plain(
        ("Book a table for two at 7.", "Your table is booked for 7 pm."),
        ("Can I talk to someone?", "I am transferring you to a human agent."),
    )
    assert codes(sgd) == [None, None]
    # a transcript whose task expects no action and whose agent called no tool has no channel
    chat = transcript(user("Lock my card."), agent("Your card has been locked."), actions=False)
    assert codes(chat) == [None]


def test_evidence_decides_the_vote_whatever_the_teachers_say() -> None:
    claimed = transcript(user("Please lock my card."), agent("Your card has been locked."))
    say: dict[str, Any] = {"quality": "success", "rcof": None, "rationale": "looks fine"}
    teachers = [{"judge": f"t{n}", **say} for n in range(3)]
    voted = vote_turn(1, teachers, certain_failures(claimed)[0])
    assert (voted["quality"], voted["rcof"], voted["decided_by"]) == (
        "failure",
        "E3",
        "certain_evidence",
    )


def served(dialogue: Dialogue) -> list[bool]:
    return [reason is not None for reason in served_turns(dialogue, complaints(dialogue))]


def test_a_grounded_tool_call_that_came_back_serves_its_turn() -> None:
    looked_up = transcript(
        user("My phone is +15551234567, what is my balance?"),
        agent("", "get_customer_by_phone", arguments={"phone": "+15551234567"}),
        result("get_customer_by_phone"),
        agent("Your checking account ending in 4567 holds $1,850.25."),
        user("Great, thanks. Now please lock my card."),
        agent("", "lock_card"),  # no identifier, but the task's action allows it
        result("lock_card"),
        agent("Your card has been locked."),
    )
    meta = [turn.metadata["tool_results_serving"] for turn in looked_up.turns]
    assert meta == [["get_customer_by_phone"], ["lock_card"]]
    assert served(looked_up) == [True, True]
    reason = served_turns(looked_up, complaints(looked_up))[0]
    assert reason is not None and "get_customer_by_phone" in reason
    # the vote takes the tool evidence over the words-only teachers, certain evidence over both
    say: dict[str, Any] = {"quality": "failure", "rcof": "E3", "rationale": "long reply"}
    teachers = [{"judge": f"t{n}", **say} for n in range(3)]
    voted = vote_turn(1, teachers, None, reason)
    assert (voted["quality"], voted["decided_by"], voted["tool_evidence"]) == (
        "success",
        "tool_evidence",
        reason,
    )
    assert vote_turn(1, teachers, ("E5", "empty reply"), reason)["quality"] == "failure"


def test_made_up_arguments_a_complaint_or_a_hand_over_serve_nothing() -> None:
    made_up = transcript(
        user("What is my balance?"),
        agent("", "get_customer_by_id", arguments={"customer_id": "zq81kd2x"}),
        result("get_customer_by_id"),
        agent("I called get_customer_by_id."),
    )
    assert made_up.turns[0].metadata.get("tool_results_serving", []) == []
    assert served(made_up) == [False]
    complained = transcript(
        user("Please lock my card."),
        agent("", "lock_card"),
        result("lock_card"),
        agent("Your card has been locked."),
        user("That's wrong, I asked you to lock my credit card, not the debit card."),
        agent("Sorry about that."),
    )
    assert served(complained)[0] is False
    handed = transcript(
        user("Please lock my card."),
        agent("", "lock_card", "transfer_to_human_agents"),
        result("lock_card"),
        result("transfer_to_human_agents"),
        agent("I am transferring you to a human agent now."),
    )
    assert served(handed) == [False]
    # no tool channel, nothing served
    assert served(plain(("Lock my card.", "Your card has been locked."))) == [False]


def test_a_user_who_says_the_request_again_complains() -> None:
    assert repeats("So, can we do that? I want to cancel a reservation.",
                   "While we're at it, can you help? I want to cancel a reservation.")  # fmt: skip
    assert not repeats("Yes, please.", "Yes, please. Lock my card.")  # too short to be a request
    assert not repeats("I also want to see my balance.", "I want to cancel a reservation.")
    looped = transcript(
        user("Can you help? I want to cancel a reservation."),
        agent("", "lock_card"),
        result("lock_card"),
        agent("I called lock_card."),
        user("So, can we do that? I want to cancel a reservation."),
        agent("I called lock_card."),
    )
    assert complaints(looped) == [True, False]
    assert served(looped)[0] is False


def test_a_failed_call_the_reply_keeps_quiet_about_is_a_system_error() -> None:
    hidden = transcript(
        user("Please lock my card."),
        agent("", "lock_card"),
        result("lock_card", error=True),
        agent("I called lock_card."),
    )
    assert codes(hidden) == ["E5"]
    told = transcript(
        user("Please lock my card."),
        agent("", "lock_card"),
        result("lock_card", error=True),
        agent("I couldn't lock the card: the system returned an error."),
    )
    asked = transcript(
        user("Please lock my card."),
        agent("", "lock_card"),
        result("lock_card", error=True),
        agent("Which card would you like me to lock, the debit or the credit card?"),
    )
    retried = transcript(
        user("Please lock my card."),
        agent("", "lock_card"),
        result("lock_card", error=True),
        agent("", "get_card"),
        result("get_card"),
        agent("Your card ending in 1234 is active."),
    )
    assert codes(told) == codes(asked) == codes(retried) == [None]


def test_a_parroting_agent_gets_no_goal_through_evaluate(tmp_path: Path) -> None:
    asks = ["I need to lock my card right away.", "Also, what is my checking balance?"]
    messages: list[dict[str, Any]] = [{"role": "assistant", "content": "Hi! How can I help?"}]
    for ask in asks:
        messages += [{"role": "user", "content": ask}, {"role": "assistant", "content": ask}]
    record = {"dialogue_id": "p1", "task_id": "t1", "messages": messages}
    source = tmp_path / "parrot.jsonl"
    source.write_text(json.dumps(record) + "\n")
    out = tmp_path / "out"
    code = main(["evaluate", str(source), "--suite", "gsr", "--out", str(out)]
                + ["--checkpoints", ":memory:"])  # fmt: skip
    assert code == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["metrics"]["gsr"] == 0.0
    (row,) = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    turns = [t for goal in row["goal_success"]["goals"] for t in goal["turns"]]
    assert [(t["quality"], t["rcof"]) for t in turns] == [("failure", "E1")] * 2
