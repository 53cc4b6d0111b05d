"""The reader's confirmation response and the Figure 11 score (paper 001, §4.3, App. A.3-A.4)."""

from __future__ import annotations

import pytest

from tests.fakes import ScriptedChatModel
from todeval.evals.memory_schema import MemoryUnit, MsTodTurn
from todeval.evals.metrics.memory.scores import joint_goal_accuracy, slot_value_mentioned
from todeval.nodes.judges.accounting import JudgeAccounting
from todeval.nodes.judges.spec import JudgeSpecError
from todeval.nodes.memory.judges.confirmation_score import ConfirmationScore
from todeval.nodes.memory.judges.reader import (
    LocalReader,
    ReaderRequest,
    memory_slots,
    render_memory,
)
from todeval.nodes.memory.judges.units import slot_answer, slot_question
from todeval.nodes.memory.roles import CONFIRMATION_SCORE, READER

SPEC = "openai:reader-test"
INTENT = "ReserveRestaurant"
CONTEXT = [
    MsTodTurn(speaker="user", utterance="Hi again, it's about the reserve restaurant for Sino.")
]


def unit(session: str, slot: str, value: str) -> MemoryUnit:
    return MemoryUnit(
        unit_id=f"ind1/{session}/{slot}",
        individual_id="ind1",
        session_id=session,
        intent=INTENT,
        intent_description="The user wants to reserve restaurant for Sino",
        question=slot_question(INTENT, slot),
        answer=slot_answer(slot, value),
        slot=slot,
        value=value,
    )


RANKED = [
    unit("s01", "time", "12:15 pm"),
    unit("s01", "number_of_seats", "2"),
    unit("s02", "time", "18:00"),  # a sibling session's time, ranked lower
    unit("s01", "location", "Milpitas"),
]


def test_local_reader_confirms_the_best_ranked_value_of_each_slot() -> None:
    result = LocalReader().respond(
        ReaderRequest(CONTEXT, INTENT, RANKED, {"restaurant_name": "Sino"})
    )
    assert result.slots == {
        "restaurant_name": "Sino",
        "location": "Milpitas",
        "time": "12:15 pm",
        "number_of_seats": "2",
    }
    assert result.response is not None and result.response.endswith("Is that correct?")
    assert "reserve restaurant" in result.response
    gold = {
        "restaurant_name": "Sino",
        "location": "Milpitas",
        "time": "12:15",
        "number_of_seats": "2",
    }
    assert joint_goal_accuracy(gold, result.response) == 1.0
    assert not slot_value_mentioned("18:00", result.response)
    assert result.judge == "local"


def test_values_the_context_states_override_memory() -> None:
    result = LocalReader().respond(ReaderRequest(CONTEXT, INTENT, RANKED, {"time": "7 pm"}))
    assert result.slots is not None and result.slots["time"] == "7 pm"
    assert result.response is not None and "12:15" not in result.response


def test_defaults_fill_only_what_neither_the_context_nor_memory_gives() -> None:
    defaults = {"number_of_seats": "4", "date": "today"}
    result = LocalReader().respond(
        ReaderRequest(CONTEXT, INTENT, RANKED, {"time": "7 pm"}, defaults=defaults)
    )
    assert result.slots is not None
    assert result.slots["number_of_seats"] == "2"  # memory beats the default
    assert result.slots["date"] == "today" and result.slots["time"] == "7 pm"


def test_refined_core_answers_are_read_back_into_slots() -> None:
    core = [
        slot_answer("time", "12:15 pm"),
        "The user asked for a quiet table.",
        "The time was 6 pm.",
    ]
    slots, loose = memory_slots(core)
    assert slots == {"time": "12:15 pm"}
    assert loose == ["The user asked for a quiet table."]
    response = LocalReader().respond(ReaderRequest(CONTEXT, INTENT, core)).response
    assert response is not None
    assert "12:15 pm" in response and "quiet table" in response and "6 pm" not in response


def test_unrefined_question_answer_texts_are_read_by_their_answer() -> None:
    unrefined = [
        f"Question: {slot_question(INTENT, 'time')} Answer: {slot_answer('time', '12:15 pm')}",
        "Q: Where did the user eat? A: The location was Milpitas.",
    ]
    assert memory_slots(unrefined) == ({"time": "12:15 pm", "location": "Milpitas"}, [])


def test_flags_read_as_words_the_slot_metric_understands() -> None:
    flags = [unit("s01", "shared_ride", "False"), unit("s01", "furnished", "True")]
    response = LocalReader().respond(ReaderRequest(CONTEXT, "GetRide", flags)).response
    assert response is not None
    assert slot_value_mentioned("False", response, slot="shared_ride")
    assert slot_value_mentioned("True", response, slot="furnished")


def test_without_memory_or_values_the_reader_asks_for_details() -> None:
    result = LocalReader().respond(ReaderRequest(CONTEXT, INTENT, []))
    assert result.slots == {}
    assert result.response is not None
    assert result.response.endswith("Could you give me the details?")


def test_render_memory_drops_questions_only_when_given_core_answers() -> None:
    assert render_memory([]) == "unavailable"
    assert render_memory(["The time was 12:15 pm."]) == "The time was 12:15 pm."
    assert render_memory(RANKED[:1]).startswith("Q: What time did the user want")


def test_llm_reader_sees_memory_and_stated_values_and_answers_once_parsed() -> None:
    model = ScriptedChatModel(
        [
            "Sure! Just to confirm...",  # prose without JSON: retried
            '{"response": "Just to confirm, a table for 2 at Sino at 12:15 pm. Is that correct?"}',
        ]
    )
    reader = READER.llm_judge(SPEC, chat_model=model, cache=None, max_retries=1)
    reader.llm.backoff_s, reader.llm.accounting = 0, JudgeAccounting()
    hint, defaults = {"restaurant_name": "Sino"}, {"restaurant_name": "x", "date": "today"}
    result = reader.respond(
        ReaderRequest(CONTEXT, INTENT, ["The time was 12:15 pm."], hint, defaults=defaults)
    )
    assert result.response == "Just to confirm, a table for 2 at Sino at 12:15 pm. Is that correct?"
    assert result.slots is None and result.judge == SPEC
    system, human = model.calls[0]
    assert system.content == "You are an dialogue assistant."  # a participant: not quoted
    assert "[MEMORY]\nThe time was 12:15 pm." in human.content
    assert "restaurant name: Sino" in human.content and "reserve restaurant" in human.content
    assert "date: today (default" in human.content and "restaurant name: x" not in human.content


def test_llm_reader_failure_is_none_with_a_reason() -> None:
    reader = READER.llm_judge(
        SPEC, chat_model=ScriptedChatModel(fallback='{"reply": "x"}'), cache=None, max_retries=0
    )
    reader.llm.accounting = JudgeAccounting()
    result = reader.respond(ReaderRequest(CONTEXT, INTENT, []))
    assert result.response is None and result.reason


def test_gpt4_score_is_null_locally_and_parsed_from_an_llm() -> None:
    scored = CONFIRMATION_SCORE.judge("local").score(CONTEXT, {"time": "12:15"}, "ref", "pred")
    local = ConfirmationScore.from_result(scored)
    assert local.score is None and local.reason and "LLM" in local.reason
    assert local.judge == "local"
    model = ScriptedChatModel(
        [
            '{"Rationale": "too good", "Score": 11}',  # out of range: retried
            '```json\n{"Rationale": "Misses the party size.", "Score": 6}\n```',
        ]
    )
    scorer = CONFIRMATION_SCORE.llm_judge(SPEC, chat_model=model, cache=None, max_retries=1)
    scorer.llm.backoff_s, scorer.llm.accounting = 0, JudgeAccounting()
    scored = scorer.score(CONTEXT, {"time": "12:15"}, "Confirming 12:15.", "Confirming 12:15 pm.")
    result = ConfirmationScore.from_result(scored)
    assert (result.score, result.rationale, result.judge) == (6, "Misses the party size.", SPEC)
    prompt = model.calls[0][-1].content
    assert "[Task Goal] time: 12:15" in prompt
    assert "[predict_answer] <data>Confirming 12:15 pm.</data>" in prompt


def test_the_reader_role_resolves_its_specs() -> None:
    assert isinstance(READER.judge("local"), LocalReader)
    assert READER.judge("local:template") is READER.judge("local:template")
    with pytest.raises(JudgeSpecError):
        READER.judge("local:oracle")
