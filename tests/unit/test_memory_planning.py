"""Intent capture and the missing-slot query of MAP (paper 001, §4.2): local and scripted LLM."""

from __future__ import annotations

import pytest

from tests.fakes import ScriptedChatModel
from todeval.evals.datasets.sgd_schema import IntentSchema, ServiceSchema
from todeval.evals.memory_schema import MsTodSession, MsTodTurn
from todeval.nodes.judges.accounting import JudgeAccounting
from todeval.nodes.judges.spec import JudgeSpecError
from todeval.nodes.memory.judges.intent_capture import CaptureRequest
from todeval.nodes.memory.judges.intent_capture.local import (
    LocalIntentCapture,
    session_values,
    stated_slot_values,
)
from todeval.nodes.memory.judges.missing_slot_query import LocalMissingSlotQuery, SlotQueryRequest
from todeval.nodes.memory.judges.planning import attribute_defaults, task_attributes
from todeval.nodes.memory.judges.units import render_context
from todeval.nodes.memory.roles import INTENT_CAPTURE, MISSING_SLOT_QUERY

SPEC = "openai:planner-test"
RESTAURANTS = ServiceSchema(
    service_name="Restaurants_2",
    intents=[
        IntentSchema(
            name="ReserveRestaurant",
            is_transactional=True,
            required_slots=["restaurant_name", "location", "time"],
            optional_slots={"number_of_seats": "2", "date": "today"},
        )
    ],
)
SESSIONS = [
    MsTodSession(
        session_id="s01",
        domain="Restaurants_2",
        intent="ReserveRestaurant",
        content=[MsTodTurn(speaker="user", utterance="Book Sino in San Jose.")],
        task_goal={"restaurant_name": "Sino", "location": "San Jose", "time": "11:30 am"},
    ),
    MsTodSession(
        session_id="s02",
        domain="Restaurants_2",
        intent="ReserveRestaurant",
        content=[MsTodTurn(speaker="user", utterance="A table at Ozumo please.")],
        task_goal={"restaurant_name": "Ozumo", "location": "Palo Alto", "number_of_seats": "4"},
    ),
    MsTodSession(
        session_id="s03",
        domain="Media_2",
        intent="RentMovie",
        content=[MsTodTurn(speaker="user", utterance="Rent Sino Story.")],
        task_goal={"movie_name": "Sino Story"},
    ),
]
CONTEXT = [
    MsTodTurn(
        speaker="user",
        utterance="Hi again, it's about the reserve restaurant for Sino. Make it 7 pm for 3.",
    )
]


def scripted(*replies: object, fallback: object = None) -> ScriptedChatModel:
    return ScriptedChatModel(list(replies), fallback=fallback)


def test_render_context_names_the_assistant_as_the_paper_does() -> None:
    turns = [*CONTEXT, MsTodTurn(speaker="system", utterance="Sure.")]
    assert render_context(turns).splitlines() == [
        f"user: {CONTEXT[0].utterance}",
        "assistant: Sure.",
    ]


def test_task_attributes_come_from_the_schema_then_from_the_sessions() -> None:
    schema = {"Restaurants_2": RESTAURANTS}
    expected = ["restaurant_name", "location", "time", "number_of_seats", "date"]
    assert task_attributes("ReserveRestaurant", schema=schema, service="Restaurants_2") == expected
    # The service is read off the intent's stored sessions when not given.
    assert task_attributes("ReserveRestaurant", schema=schema, sessions=SESSIONS) == expected
    # No schema: the slots the intent's sessions set, most used first; other intents ignored.
    from_sessions = task_attributes("ReserveRestaurant", sessions=SESSIONS)
    assert from_sessions[:2] == ["restaurant_name", "location"]
    assert set(from_sessions) == {"restaurant_name", "location", "time", "number_of_seats"}
    assert task_attributes("BookHouse", sessions=SESSIONS) == []


def test_task_attributes_pick_the_service_whose_slots_memory_uses() -> None:
    hotels = {
        name: ServiceSchema(
            service_name=name,
            intents=[IntentSchema(name="ReserveHotel", required_slots=slots)],
        )
        for name, slots in (
            ("Hotels_1", ["hotel_name", "destination"]),
            ("Hotels_4", ["place_name", "location"]),
        )
    }
    assert task_attributes("ReserveHotel", schema=hotels) == ["hotel_name", "destination"]
    assert task_attributes("ReserveHotel", schema=hotels, known_slots=["place_name"]) == [
        "place_name",
        "location",
    ]
    assert task_attributes("ReserveHotel", schema=hotels, service="Hotels_1") == [
        "hotel_name",
        "destination",
    ]


def test_defaults_are_the_optional_slots_defaults_but_dontcare() -> None:
    music = ServiceSchema(
        service_name="Music_1",
        intents=[
            IntentSchema(
                name="PlaySong",
                required_slots=["song_name"],
                optional_slots={"artist": "dontcare", "playback_device": "TV"},
            )
        ],
    )
    schema = {"Restaurants_2": RESTAURANTS, "Music_1": music}
    assert attribute_defaults("PlaySong", schema) == {"playback_device": "TV"}
    assert attribute_defaults("ReserveRestaurant", schema) == {
        "number_of_seats": "2",
        "date": "today",
    }
    assert attribute_defaults("BookHouse", schema) == {}


def test_stated_values_need_a_mention_and_numbers_need_their_slot_word() -> None:
    text = "I'll stay for one day in Sino. One room is fine... oh and 4 stars."
    candidates = [
        ("restaurant_name", "Sino"),
        ("restaurant_name", "Ozumo"),
        ("number_of_days", "1"),
        ("star_rating", "4"),
        ("number_of_seats", "4"),  # "4" is said, but about stars
        ("location", "San Jose"),
    ]
    assert stated_slot_values(text, candidates) == {
        "restaurant_name": "Sino",
        "number_of_days": "1",
        "star_rating": "4",
    }


def test_local_capture_states_the_intent_and_the_values_the_context_names() -> None:
    known = session_values(SESSIONS, "ReserveRestaurant")
    captured = LocalIntentCapture().capture(
        CaptureRequest(CONTEXT, "ReserveRestaurant", known_values=known)
    )
    # "Sino" is a remembered name; "7 pm" and "for 3" are new values in natural wording.
    assert captured.stated_values == {
        "restaurant_name": "Sino",
        "time": "7 pm",
        "number_of_seats": "3",
    }
    assert captured.intent_description == "The user wants to reserve restaurant for Sino"
    assert captured.judge == "local" and captured.reason is None


def test_local_capture_without_an_intent_is_not_judged() -> None:
    captured = LocalIntentCapture().capture(CaptureRequest(CONTEXT, ""))
    assert captured.intent_description is None and captured.reason


def test_missing_slot_query_lists_exactly_the_unfilled_attributes() -> None:
    attributes = ["restaurant_name", "location", "time", "number_of_seats", "date"]
    stated = {"restaurant_name": "Sino", "time": "7 pm"}
    result = LocalMissingSlotQuery().query(
        SlotQueryRequest(CONTEXT, "ReserveRestaurant", attributes, stated)
    )
    assert result.missing_slots == ["location", "number_of_seats", "date"]
    assert len(result.questions) == 3
    assert all(q.startswith("What ") and "the user" in q for q in result.questions)
    assert result.query is not None and "number of seats" in result.query
    assert "restaurant name" not in result.query


def test_missing_slot_query_with_everything_filled_is_empty_not_none() -> None:
    result = LocalMissingSlotQuery().query(
        SlotQueryRequest(
            CONTEXT, "ReserveRestaurant", ["restaurant_name"], {"restaurant_name": "Sino"}
        )
    )
    assert result.missing_slots == [] and result.query == ""


def test_missing_slot_query_without_attributes_says_why() -> None:
    result = LocalMissingSlotQuery().query(SlotQueryRequest(CONTEXT, "BookHouse", []))
    assert result.missing_slots is None and result.query is None
    assert result.reason and "BookHouse" in result.reason


def test_llm_capture_reads_the_description_after_reasoning() -> None:
    model = scripted(
        '<think>they mean the Sino booking</think>{"intent_description": '
        '"The user wants to reserve a table at Sino for 3 at 7 pm"}'
    )
    capture = INTENT_CAPTURE.llm_judge(SPEC, chat_model=model, cache=None)
    result = capture.capture(CaptureRequest(CONTEXT, "ReserveRestaurant"))
    assert result.intent_description == "The user wants to reserve a table at Sino for 3 at 7 pm"
    assert result.judge == SPEC and result.stated_values == {}
    sent = model.calls[0][-1].content
    assert "reserve restaurant" in sent and "Make it 7 pm" in sent


def test_llm_missing_query_retries_malformed_json_and_maps_words_to_slots() -> None:
    model = scripted(
        '{"missing_slots": ["location", "number of seats"], "questions": ["Where',  # cut off
        "<think>location and seats are not given</think>"
        '{"missing_slots": ["location", "number of seats", "mood"], '
        '"questions": ["Where does the user want to dine?", "How many people are there?"]}',
    )
    querier = MISSING_SLOT_QUERY.llm_judge(SPEC, chat_model=model, cache=None, max_retries=1)
    querier.llm.backoff_s = 0
    querier.llm.accounting = JudgeAccounting()
    attributes = ["restaurant_name", "location", "time", "number_of_seats"]
    result = querier.query(SlotQueryRequest(CONTEXT, "ReserveRestaurant", attributes))
    assert result.missing_slots == ["location", "number_of_seats", "mood"]
    assert result.query == "Where does the user want to dine? How many people are there?"
    assert len(model.calls) == 2
    # The prompt lists the attributes in words, never values.
    first = model.calls[0][-1].content
    assert "restaurant name, location, time, number of seats" in first
    assert "11:30" not in first


def test_llm_missing_query_that_never_parses_is_none_with_a_reason() -> None:
    model = scripted(fallback="I cannot help with that.")
    querier = MISSING_SLOT_QUERY.llm_judge(SPEC, chat_model=model, cache=None, max_retries=1)
    querier.llm.accounting = JudgeAccounting()
    result = querier.query(SlotQueryRequest(CONTEXT, "ReserveRestaurant", ["location"]))
    assert result.missing_slots is None and result.query is None
    assert result.reason and "gave up" in result.reason
    assert result.judge == SPEC


def test_the_planning_roles_resolve_specs() -> None:
    assert isinstance(INTENT_CAPTURE.judge("local"), LocalIntentCapture)
    assert isinstance(MISSING_SLOT_QUERY.judge("local"), LocalMissingSlotQuery)
    with pytest.raises(JudgeSpecError):
        MISSING_SLOT_QUERY.judge("local:oracle")
    with pytest.raises(JudgeSpecError):
        INTENT_CAPTURE.judge("nosuchprovider:model")
