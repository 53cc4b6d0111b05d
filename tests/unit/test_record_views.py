"""Every record kind seen as a dialogue, and which subsystems apply to it."""

from __future__ import annotations

from todeval.evals.goal_shift_schema import Conversation, Message, TaskSpec, ToolCall
from todeval.evals.goal_tracking_schema import AtodDialogue
from todeval.evals.memory_schema import MsTodEvalItem, MsTodSession
from todeval.evals.record_views import (
    MemoryItem,
    atod_record,
    conversation_record,
    dialogue_record,
    memory_record,
)
from todeval.evals.schema import Dialogue
from todeval.evals.subsystems import applicable_suites


def _conversation(tool_calls: bool, goals: list[str]) -> Conversation:
    messages = [
        Message(turn=0, role="assistant", content="Hi! How can I help?"),
        Message(turn=1, role="user", content="What's my balance?"),
        Message(
            turn=2,
            role="assistant",
            tool_calls=[ToolCall(id="c1", name="get_balance", arguments={})] if tool_calls else [],
        ),
        Message(turn=3, role="tool", tool_call_id="c1", content="oops", error=True),
        Message(turn=4, role="assistant", content="It is $12."),
        Message(turn=5, role="user", content="Actually, block my card."),
        Message(turn=6, role="assistant", content="Done."),
    ]
    task = TaskSpec(task_id="t1", goals=goals)
    return Conversation(dialogue_id="c1", task_id="t1", messages=messages, task=task)


def test_a_transcript_pairs_user_messages_with_the_assistants_words() -> None:
    record = conversation_record(_conversation(tool_calls=True, goals=["balance"]))
    turns = record.dialogue.turns
    assert [(t.user_msg, t.response) for t in turns] == [
        ("What's my balance?", "It is $12."),
        ("Actually, block my card.", "Done."),
    ]
    assert turns[0].metadata == {"tool_calls": ["get_balance"], "tool_errors": 1}
    assert record.dialogue.metadata["opening"] == "Hi! How can I help?"
    assert applicable_suites(record) == ["goal_success", "goal_tracking", "goal_shift"]


def test_goal_shift_applies_to_annotated_shifts_even_without_tool_calls() -> None:
    shifted = conversation_record(_conversation(tool_calls=False, goals=["balance", "card"]))
    plain = conversation_record(_conversation(tool_calls=False, goals=["balance"]))
    assert "goal_shift" in applicable_suites(shifted)
    assert "goal_shift" not in applicable_suites(plain)


def test_goal_shift_scores_every_task_with_tsr_criteria_as_simulate_does() -> None:
    """One TSR (issue 29 item 4): a single-goal task the agent made no call on is scored too.

    ``simulate`` scores every conversation it ran; ``evaluate`` used to skip those without
    tool calls or goal shifts, so it averaged TSR over fewer conversations (0.300 vs 0.228).
    """
    plain = _conversation(tool_calls=False, goals=["balance"])
    assert plain.task is not None
    asserted = plain.model_copy(
        update={"task": plain.task.model_copy(update={"nl_assertions": ["Agent gave the balance"]})}
    )
    told = plain.model_copy(
        update={"task": plain.task.model_copy(update={"communicate_info": ["$12"]})}
    )
    assert "goal_shift" in applicable_suites(conversation_record(asserted))
    assert "goal_shift" in applicable_suites(conversation_record(told))


def test_memory_applies_only_with_earlier_sessions_and_suites_can_be_narrowed() -> None:
    item = MsTodEvalItem(
        eval_id="e1",
        intent="ReserveRestaurant",
        context=[{"speaker": "user", "utterance": "Hi again, it's about Sino."}],
        task_goal={"restaurant_name": "Sino"},
        reference_response="Confirming Sino?",
        relevant_session_ids=["s1"],
    )
    session = MsTodSession(
        session_id="s1",
        domain="Restaurants_1",
        intent="ReserveRestaurant",
        content=[{"speaker": "user", "utterance": "A table at Sino."}],
        task_goal={"restaurant_name": "Sino"},
    )
    with_memory = memory_record(MemoryItem(individual_id="u1", item=item, sessions=[session]))
    without = memory_record(MemoryItem(individual_id="u1", item=item, sessions=[]))
    # The item's context waits for the system's reply: no answered turn for Goal Success Rate.
    assert applicable_suites(with_memory) == ["goal_tracking", "memory"]
    assert applicable_suites(without) == ["goal_tracking"]
    assert applicable_suites(with_memory, ["memory", "goal_shift"]) == ["memory"]
    assert with_memory.dialogue.turns[0].user_msg == "Hi again, it's about Sino."


def test_atod_and_plain_dialogues() -> None:
    atod = AtodDialogue.model_validate(
        {
            "dialogue_id": "a1",
            "turns": [
                {"turn_id": 1, "speaker": "USER", "utterance": "Book a hotel."},
                {"turn_id": 2, "speaker": "SYSTEM", "utterance": "Which city?"},
                {"turn_id": 3, "speaker": "USER", "utterance": "Paris."},
            ],
        }
    )
    record = atod_record(atod)
    # The last user message ended the transcript unanswered: kept aside, not judged as a turn.
    assert [(t.user_msg, t.response) for t in record.dialogue.turns] == [
        ("Book a hotel.", "Which city?")
    ]
    assert record.dialogue.metadata["unanswered"] == "Paris."
    assert len(record.atod.turns) == 3  # the tracker still reads every utterance
    assert record.atod is atod and record.dialogue_id == "a1"
    plain = Dialogue.model_validate(
        {"dialog_id": "d1", "turns": [{"turn_number": 1, "user_msg": "hi", "response": "hello"}]}
    )
    assert applicable_suites(dialogue_record(plain)) == ["goal_success", "goal_tracking"]


def test_a_transcript_ending_on_the_user_has_no_unanswered_turn_to_judge() -> None:
    conversation = Conversation(
        dialogue_id="c9",
        task_id="t9",
        messages=[
            Message(turn=0, role="user", content="Cancel my order #W2, please."),
            Message(turn=1, role="assistant", content="Done: order #W2 is cancelled."),
            Message(turn=2, role="user", content="Thanks! ###STOP###"),
        ],
    )
    dialogue = conversation_record(conversation).dialogue
    # The simulator's stop token is not speech; its last message got no reply and is no turn.
    assert [(t.user_msg, t.response) for t in dialogue.turns] == [
        ("Cancel my order #W2, please.", "Done: order #W2 is cancelled.")
    ]
    assert dialogue.metadata["unanswered"] == "Thanks!"
