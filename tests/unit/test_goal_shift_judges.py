"""Shift-detection and NL-assertion judges: scripted LLMs (good, malformed, out of order), local."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import todeval.nodes.judges.llm as llm_module
from tests.fakes import ScriptedChatModel
from todeval.evals.goal_shift_schema import (
    Conversation,
    Message,
    NLAssertionJudgment,
    ShiftJudgment,
    StoredJudgments,
    TaskSpec,
    ToolCall,
)
from todeval.graphs.goal_shift import graph
from todeval.nodes.context import Context
from todeval.nodes.goal_shift.judges.nl_assertion import (
    NO_EVIDENCE,
    UNSETTLED,
    LocalNLAssertionJudge,
)
from todeval.nodes.goal_shift.judges.shift_detection import render_transcript
from todeval.nodes.goal_shift.judges.shift_detection_local import LocalShiftDetector
from todeval.nodes.goal_shift.roles import NL_ASSERTION, SHIFT_DETECTION
from todeval.nodes.judges.spec import parse_spec
from todeval.stores.llm_cache import LLMCache

SPEC = parse_spec("openai:gpt-4o-mini")


def message(turn: int, role: str, content: str = "", **extra: Any) -> Message:
    return Message.model_validate({"turn": turn, "role": role, "content": content, **extra})


def call(turn: int, call_id: str, name: str, arguments: dict[str, Any]) -> Message:
    tool_call = ToolCall(id=call_id, name=name, arguments=arguments)
    return message(turn, "assistant", tool_calls=[tool_call])


CONVERSATION = Conversation(
    dialogue_id="c1",
    task_id="t1",
    messages=[
        message(0, "assistant", "Hi! How can I help you today?"),
        message(1, "user", "I can't log in to my online banking, please verify my identity."),
        call(2, "k1", "get_customer_by_phone", {"phone_number": "+1555"}),
        message(3, "tool", '{"customer_id": "cust_1"}', tool_call_id="k1"),
        message(4, "assistant", "Thanks Maria, your identity is verified and login is reset."),
        message(5, "user", "Also, I see a charge I don't recognise. I want to dispute it."),
        message(6, "assistant", "I can help you dispute that charge. Which transaction is it?"),
        message(7, "user", "tx_101 for $89.99."),
        call(8, "k2", "file_dispute", {"account_id": "a1", "tx_id": "tx_101"}),
        message(9, "tool", '{"dispute_id": "d1"}', tool_call_id="k2"),
        message(10, "assistant", "Your dispute for tx_101 is filed."),
    ],
    task=TaskSpec(
        task_id="t1",
        goals=["authentication", "dispute"],
        nl_assertions=[
            "Agent did not transfer the customer to a human agent when the goal changed",
            "Agent explained next steps for the dispute",
        ],
    ),
)


@pytest.fixture(autouse=True)
def _fresh_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    cache = LLMCache(tmp_path / "llm_cache.sqlite")
    monkeypatch.setattr(llm_module, "default_llm_cache", lambda: cache)
    SHIFT_DETECTION.cache_clear()
    NL_ASSERTION.cache_clear()
    yield
    SHIFT_DETECTION.cache_clear()
    NL_ASSERTION.cache_clear()


def detection(*shifts: dict[str, Any]) -> str:
    return json.dumps(
        {"start_goal": {"turn": 1, "goal": "authentication"}, "user_goal_shifts": list(shifts)}
    )


SHIFT = {
    "turn": 5,
    "from": "authentication",
    "to": "dispute",
    "acknowledgment_turn": 6,
    "tool_turn": 8,
    "outcome_turn": 10,
    "transferred_to_human": False,
}


def test_llm_shift_detector_reads_the_appendix_g_answer() -> None:
    model = ScriptedChatModel([f"<think>turn 5 moves on</think>```json\n{detection(SHIFT)}\n```"])
    verdict = SHIFT_DETECTION.llm_judge(SPEC, chat_model=model, cache=None).detect(CONVERSATION)
    assert verdict.judge == "openai:gpt-4o-mini" and verdict.reason is None
    assert verdict.shifts == [
        ShiftJudgment(
            turn=5,
            from_goal="authentication",
            to_goal="dispute",
            acknowledgment_turn=6,
            tool_turn=8,
            outcome_turn=10,
        )
    ]
    prompt = str(model.calls[0][-1].content)
    assert "allowed_goals (ordered): [authentication, dispute]" in prompt
    assert "5:user:Also, I see a charge" in prompt
    assert '8:assistant:[call] file_dispute({"account_id": "a1", "tx_id": "tx_101"})' in prompt


def test_llm_shift_detector_drops_shifts_out_of_goal_order() -> None:
    wrong_goal = SHIFT | {"to": "payments"}
    assistant_turn = SHIFT | {"turn": 6}
    model = ScriptedChatModel([detection(wrong_goal, assistant_turn, SHIFT, SHIFT)])
    verdict = SHIFT_DETECTION.llm_judge(SPEC, chat_model=model, cache=None).detect(CONVERSATION)
    assert verdict.shifts is not None and [s.turn for s in verdict.shifts] == [5]  # capped at 1
    assert verdict.reason is not None and "payments" in verdict.reason


def test_llm_shift_detector_retries_malformed_json_then_gives_up_with_a_reason() -> None:
    retried = ScriptedChatModel(['{"user_goal_shifts": [{"turn": 5,', detection(SHIFT)])
    verdict = SHIFT_DETECTION.llm_judge(SPEC, chat_model=retried, cache=None).detect(CONVERSATION)
    assert verdict.shifts is not None and len(verdict.shifts) == 1 and len(retried.calls) == 2
    broken = ScriptedChatModel(fallback="I cannot help with that.")
    detector = SHIFT_DETECTION.llm_judge(
        SPEC, chat_model=broken, cache=None, max_retries=1, backoff_s=0
    )
    failed = detector.detect(CONVERSATION)
    assert failed.shifts is None and failed.reason and "gave up after 2 attempts" in failed.reason


def test_llm_nl_judge_matches_answers_by_order() -> None:
    answer = {"results": [{"nl_assertion": "x", "met": True, "justification": " no transfer "}]}
    model = ScriptedChatModel([json.dumps(answer)])
    verdict = NL_ASSERTION.llm_judge(SPEC, chat_model=model, cache=None).judge(CONVERSATION)
    first, second = verdict.judgments
    assert (first.met, first.justification) == (True, "no transfer")
    assert first.nl_assertion.startswith("Agent did not transfer")  # the task's wording
    assert second.met is None and second.justification == "the judge skipped it"
    assert "2. Agent explained next steps" in str(model.calls[0][-1].content)
    malformed = ScriptedChatModel(fallback='{"results": [{"met": "perhaps"}]}')
    judge = NL_ASSERTION.llm_judge(SPEC, chat_model=malformed, cache=None, max_retries=0)
    assert all(j.met is None for j in judge.judge(CONVERSATION).judgments)


def test_local_nl_judge_settles_transfers_from_the_calls() -> None:
    verdict = LocalNLAssertionJudge().judge(CONVERSATION)
    transfer = verdict.judgments[0]
    assert transfer.met is True and "never called" in transfer.justification
    transferred = CONVERSATION.model_copy(
        update={
            "messages": [
                *CONVERSATION.messages,
                call(11, "k3", "transfer_to_human_agents", {"summary": "help"}),
            ]
        }
    )
    assert LocalNLAssertionJudge().judge(transferred).judgments[0].met is False


EXPLAINED = (
    "Your dispute for tx_101 is filed as case D-1. Our team reviews it within ten business "
    "days; a provisional credit appears on your statement meanwhile and we email the outcome."
)


def _with_assertions(conversation: Conversation, *assertions: str) -> Conversation:
    task = (conversation.task or TaskSpec(task_id="t1")).model_copy(
        update={"nl_assertions": list(assertions)}
    )
    return conversation.model_copy(update={"task": task})


def test_local_nl_judge_needs_the_tool_an_action_assertion_names() -> None:
    """An assertion naming a tool's action is met only when that tool ran on the dialogue's data."""
    assertion = "Agent filed the dispute and explained the next steps"
    replies = [*CONVERSATION.messages[:10], message(10, "assistant", EXPLAINED)]
    done = _with_assertions(CONVERSATION.model_copy(update={"messages": replies}), assertion)
    (met,) = LocalNLAssertionJudge().judge(done).judgments
    assert met.met is True and "file_dispute" in met.justification
    made_up = [
        *CONVERSATION.messages[:8],
        call(8, "k2", "file_dispute", {"account_id": "qz81kx", "tx_id": "w9w9w9"}),
        message(9, "tool", '{"dispute_id": "d1"}', tool_call_id="k2"),
        message(10, "assistant", EXPLAINED),
    ]
    claimed = _with_assertions(CONVERSATION.model_copy(update={"messages": made_up}), assertion)
    (unmet,) = LocalNLAssertionJudge().judge(claimed).judgments
    assert unmet.met is False and unmet.justification.startswith("no successful call of")


def test_local_nl_judge_says_not_met_for_an_agent_that_said_nothing_of_its_own() -> None:
    opening = CONVERSATION.messages[:2]
    said = "Agent explained next steps for the account clearly"
    for turns in (
        [message(2, "assistant", "Done! I have completed everything you asked.")] * 2,
        [message(2, "assistant", CONVERSATION.messages[1].content)],
        [message(2, "assistant", "I called get_transactions.")],
    ):
        idle = _with_assertions(
            CONVERSATION.model_copy(update={"messages": [*opening, *turns]}), said
        )
        (verdict,) = LocalNLAssertionJudge().judge(idle).judgments
        assert verdict.met is False and "nothing of its own" in verdict.justification


def test_local_nl_judge_leaves_replies_without_work_undecided() -> None:
    """Replies of its own but no tool that ran: met only when a reply is close to the assertion."""
    talk = [
        *CONVERSATION.messages[:2],
        message(
            2,
            "assistant",
            "Maria, I am glad to help you with your online banking access today. Please tell "
            "me your registered phone number so I can look up your profile and assist you.",
        ),
    ]
    idle = _with_assertions(
        CONVERSATION.model_copy(update={"messages": talk}),
        "The assistant provided helpful service to Maria Santos.",
    )
    (verdict,) = LocalNLAssertionJudge().judge(idle).judgments
    assert verdict.met is None and verdict.justification == UNSETTLED


def test_local_nl_judge_says_met_only_on_positive_evidence() -> None:
    """An agent that did nothing, echoed the user or only claimed success did not "not transfer"."""
    opening = CONVERSATION.messages[:2]
    idle_agents = {
        "empty": [message(2, "assistant", "")],
        "claims done": [message(2, "assistant", "Done! I have completed everything you asked.")],
        "parrot": [message(2, "assistant", CONVERSATION.messages[1].content)],
        "failed call": [
            call(2, "k9", "get_customer_by_phone", {"phone_number": "x"}),
            message(3, "tool", "Error: not found", tool_call_id="k9", error=True),
        ],
    }
    for name, turns in idle_agents.items():
        idle = CONVERSATION.model_copy(update={"messages": [*opening, *turns]})
        transfer = LocalNLAssertionJudge().judge(idle).judgments[0]
        assert transfer.met is None and transfer.justification == NO_EVIDENCE, name


def test_local_shift_detector_finds_the_dispute_shift() -> None:
    verdict = LocalShiftDetector().detect(CONVERSATION)
    assert verdict.judge == "local"
    (shift,) = verdict.shifts or []
    assert (shift.turn, shift.to_goal) == (5, "dispute")
    assert shift.acknowledgment_turn == 6 and shift.tool_turn == 8 and shift.outcome_turn == 10
    assert not shift.transferred_to_human
    single = CONVERSATION.model_copy(update={"task": TaskSpec(task_id="t1", goals=["dispute"])})
    assert LocalShiftDetector().detect(single).shifts == []


def test_graph_judges_when_nothing_is_stored_and_reuses_when_stored(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model = ScriptedChatModel(
        [detection(SHIFT), json.dumps({"results": [{"met": False}, {"met": True}]})]
    )
    monkeypatch.setattr(llm_module, "load_chat_model", lambda spec, **kwargs: model)
    context = Context(judges={"shift_detection": SPEC.raw, "nl_assertion": SPEC.raw})
    judged = graph.invoke({"conversation": CONVERSATION.model_dump(mode="json")}, context=context)
    assert judged["shift_judge"] == SPEC.raw and judged["nl_judge"] == SPEC.raw
    assert judged["shifts"][0]["ack"] == 1 and judged["shifts"][0]["recovered"] is True
    assert judged["tsr_channels"]["nl_assertion"] == 0.5
    stored = CONVERSATION.model_copy(
        update={
            "stored": StoredJudgments(
                shifts=[ShiftJudgment(turn=7, transferred_to_human=True)],
                nl_assertions=[NLAssertionJudgment(nl_assertion="a", met=True)],
            )
        }
    )
    reused = graph.invoke({"conversation": stored.model_dump(mode="json")}, context=context)
    assert reused["shift_judge"] == "stored" and reused["shifts"][0]["recovered"] is False
    assert reused["tsr_channels"]["nl_assertion"] == 1.0
    assert len(model.calls) == 2  # the stored conversation cost no call


def test_render_transcript_marks_errors() -> None:
    lines = render_transcript([message(3, "tool", "Error: nope", tool_call_id="k", error=True)])
    assert lines == "3:tool:[error] Error: nope"


def test_local_shift_detector_takes_no_echo_claim_or_made_up_call_as_recovery() -> None:
    """Recovery needs the agent to act on the new goal (issue 29)."""
    before = CONVERSATION.messages[:6]  # the shift to "dispute" is at turn 5
    shift = CONVERSATION.messages[5].content
    floors = {
        "parrot": [message(6, "assistant", shift)],
        "claims done": [message(6, "assistant", "Done! I have completed everything you asked.")],
        "made-up call": [
            call(6, "k5", "file_dispute", {"account_id": "qz81kx", "tx_id": "w9w9w9"}),
            message(7, "tool", '{"dispute_id": "d9"}', tool_call_id="k5"),
            message(8, "assistant", "I called file_dispute."),
        ],
    }
    for name, turns in floors.items():
        conversation = CONVERSATION.model_copy(update={"messages": [*before, *turns]})
        (found,) = LocalShiftDetector().detect(conversation).shifts or []
        assert found.acknowledgment_turn is None and found.tool_turn is None, name
    acted = [
        *before,
        message(6, "user", "It is tx_101."),
        call(7, "k6", "file_dispute", {"account_id": "a1", "tx_id": "tx_101"}),
        message(8, "tool", '{"dispute_id": "d1"}', tool_call_id="k6"),
    ]
    conversation = CONVERSATION.model_copy(update={"messages": acted})
    (found,) = LocalShiftDetector().detect(conversation).shifts or []
    assert found.acknowledgment_turn == 7 and found.tool_turn == 7  # a relevant call that ran
