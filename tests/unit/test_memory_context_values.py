"""Values the new session's context states count (MAP §4.2 intent capture, §4.3 reader).

The user says things afresh when they come back ("Yes, I want trip insurance", "a table for
one", "at quarter past 1 in the afternoon"); intent capture reads them and the reader
confirms them ahead of memory.
"""

from __future__ import annotations

import pytest

from todeval.evals.datasets.sgd_schema import IntentSchema, ServiceSchema, SlotSchema
from todeval.evals.memory_schema import MemoryUnit, MsTodTurn
from todeval.evals.metrics.memory.scores import slot_value_mentioned
from todeval.nodes.memory.judges.intent_capture import CaptureRequest
from todeval.nodes.memory.judges.intent_capture.features import (
    ValueKind,
    context_values,
    settle_dates,
    value_kind,
)
from todeval.nodes.memory.judges.intent_capture.local import LocalIntentCapture
from todeval.nodes.memory.judges.reader import LocalReader, ReaderRequest
from todeval.nodes.memory.judges.units import slot_answer, slot_question

TRAINS: dict[str, ValueKind] = {
    "from": "other",
    "to": "other",
    "date_of_journey": "date",
    "journey_start_time": "time",
    "number_of_adults": "count",
    "trip_protection": "flag",
}


@pytest.mark.parametrize(
    ("text", "kinds", "expected"),
    [
        ("Yes, I want trip insurance.", TRAINS, {"trip_protection": "True"}),
        ("No trip insurance, thanks.", TRAINS, {"trip_protection": "False"}),
        ("I don't want a shared ride.", {"shared_ride": "flag"}, {"shared_ride": "False"}),
        ("No need for a shuttle.", {"airport_shuttle": "flag"}, {"airport_shuttle": "False"}),
        ("A non-smoking room.", {"smoking_allowed": "flag"}, {"smoking_allowed": "False"}),
        ("Book a table for one.", {"number_of_seats": "count"}, {"number_of_seats": "1"}),
        ("We are 3 people.", {"number_of_seats": "count"}, {"number_of_seats": "3"}),
        ("Two tickets, please.", TRAINS, {"number_of_adults": "2"}),  # a ticket per adult
        ("Get 2 rooms for 4 nights.", {"number_of_rooms": "count", "stay_length": "count"},
         {"number_of_rooms": "2", "stay_length": "4"}),
        ("3.", {"travelers": "count"}, {"travelers": "3"}),
        ("Make it for 8 in the night.", {"number_of_seats": "count", "time": "time"},
         {"time": "8 pm"}),  # "for 8" is a time here, not a party of eight
        ("At quarter past 1 in the afternoon.", {"time": "time"}, {"time": "1:15 pm"}),
        ("I'd like it at evening 6:45.", {"time": "time"}, {"time": "6:45 pm"}),
        ("On the 2nd of March.", {"date": "date"}, {"date": "March 2nd"}),
        ("Tomorrow works.", {"date": "date"}, {"date": "tomorrow"}),
        ("From March 3rd to March 5th.", {"check_in_date": "date", "check_out_date": "date"},
         {"check_in_date": "March 3rd", "check_out_date": "March 5th"}),
        ("Pick it up at 10 am and drop it off on March 9th.",
         {"pickup_date": "date", "dropoff_date": "date", "pickup_time": "time"},
         {"pickup_time": "10 am", "dropoff_date": "March 9th"}),
        ("Send 1,130 bucks to Justin.", {"amount": "amount"}, {"amount": "$1,130"}),
    ],
)  # fmt: skip
def test_context_values_in_natural_wording(
    text: str, kinds: dict[str, ValueKind], expected: dict[str, str]
) -> None:
    assert context_values(text, kinds, generic=False) == expected


def test_a_value_of_a_kind_no_slot_holds_keeps_a_generic_name() -> None:
    said = "Reserve a spot at quarter past 1 in the afternoon for three people."
    assert context_values(said, {"restaurant_name": "other"}) == {
        "time": "1:15 pm",
        "number_of_people": "3",
    }
    assert context_values(said, {"restaurant_name": "other"}, generic=False) == {}


def test_value_kinds_come_from_known_values_then_the_slot_name() -> None:
    assert value_kind("trip_protection", ["True", "False"]) == "flag"
    assert value_kind("trip_protection") == "other"  # a flag needs its values
    assert value_kind("class", ["1", "2"]) == "count"
    assert value_kind("journey_start_time") == "time"
    assert value_kind("check_in_date") == "date"
    assert value_kind("number_of_seats") == "count"
    assert value_kind("transfer_amount") == "amount"
    assert value_kind("restaurant_name") == "other"


def test_a_date_that_names_no_calendar_day_gives_way_to_memory() -> None:
    kinds: dict[str, ValueKind] = {"date": "date"}
    memory = [("date", "March 7th"), ("date", "March 12th")]
    assert settle_dates({"date": "thursday next week"}, kinds, memory) == {}
    assert settle_dates({"date": "the 12th"}, kinds, memory) == {"date": "March 12th"}
    assert settle_dates({"date": "the 3rd"}, kinds, memory) == {}
    assert settle_dates({"date": "tomorrow"}, kinds, []) == {"date": "tomorrow"}
    assert settle_dates({"date": "March 2nd"}, kinds, memory) == {"date": "March 2nd"}


TRAINS_SCHEMA = ServiceSchema(
    service_name="Trains_1",
    slots=[
        SlotSchema(name="trip_protection", is_categorical=True, possible_values=["True", "False"]),
        SlotSchema(name="number_of_adults", is_categorical=True, possible_values=["1", "2", "3"]),
        SlotSchema(name="class", is_categorical=True, possible_values=["Value", "Flexible"]),
    ],
    intents=[
        IntentSchema(
            name="GetTrainTickets",
            is_transactional=True,
            required_slots=["from", "to", "date_of_journey", "number_of_adults", "trip_protection"],
            optional_slots={"class": "Value"},
        )
    ],
)
REENTRY = "Hi again, it's about the get train tickets for Sacramento."


def test_capture_reads_new_values_with_the_schema_and_without() -> None:
    context = [MsTodTurn(speaker="user", utterance=f"{REENTRY} Yes, I want trip insurance.")]
    known = [("to", "Sacramento"), ("from", "Fresno"), ("trip_protection", "False")]
    with_schema = LocalIntentCapture().capture(
        CaptureRequest(
            context,
            "GetTrainTickets",
            known_values=known,
            service="Trains_1",
            attributes=["from", "to", "date_of_journey", "number_of_adults", "trip_protection"],
            schema={"Trains_1": TRAINS_SCHEMA},
        )
    )
    assert with_schema.stated_values == {"trip_protection": "True", "to": "Sacramento"}
    # Without a schema, memory's values of the slot tell that it is a flag.
    bare = LocalIntentCapture().capture(
        CaptureRequest(context, "GetTrainTickets", known_values=known)
    )
    assert bare.stated_values == {"trip_protection": "True", "to": "Sacramento"}


def _unit(slot: str, value: str) -> MemoryUnit:
    return MemoryUnit(
        unit_id=f"u/s1/{slot}", individual_id="u", session_id="s1", intent="GetTrainTickets",
        intent_description="The user wants to get train tickets", value=value, slot=slot,
        question=slot_question("GetTrainTickets", slot), answer=slot_answer(slot, value),
    )  # fmt: skip


def test_the_reader_confirms_what_the_context_states_over_memory() -> None:
    said = f"{REENTRY} Yes, I want trip insurance, for 2 adults at quarter to 6 in the evening."
    context = [MsTodTurn(speaker="user", utterance=said)]
    memory = [
        _unit("to", "Sacramento"),
        _unit("trip_protection", "False"),
        _unit("number_of_adults", "1"),
        _unit("journey_start_time", "8 am"),
    ]
    captured = LocalIntentCapture().capture(
        CaptureRequest(
            context,
            "GetTrainTickets",
            known_values=[(u.slot or "", u.value or "") for u in memory],
            attributes=["to", "trip_protection", "number_of_adults", "journey_start_time"],
        )
    )
    result = LocalReader().respond(
        ReaderRequest(
            context, "GetTrainTickets", [u.answer for u in memory], captured.stated_values
        )
    )
    gold = {
        "to": "Sacramento",
        "trip_protection": "True",
        "number_of_adults": "2",
        "journey_start_time": "5:45 pm",
    }
    assert result.response is not None
    assert all(slot_value_mentioned(v, result.response, slot=s) for s, v in gold.items())
    assert not slot_value_mentioned("False", result.response, slot="trip_protection")
