"""ATOD gold from SGD: one hand-made dialogue per mapping rule, then all of SGD dev."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from todeval.evals.datasets import DatasetFormatError, load_dialogues, split_records
from todeval.evals.datasets.atod import load_atod
from todeval.evals.datasets.errors import FieldError
from todeval.evals.datasets.sgd import sgd_compact_dialogue
from todeval.evals.datasets.sgd_goals import sgd_to_atod
from todeval.evals.datasets.sgd_schema import ServiceSchema, is_transactional, load_sgd_schema
from todeval.evals.goal_tracking_schema import TRACKED_STATUSES, VALID_TRANSITIONS, AtodDialogue
from todeval.evals.schema import Dialogue
from todeval.stores.paths import data_dir

R, H = "Restaurants_2", "Hotels_2"

SCHEMA = {
    service["service_name"]: ServiceSchema.model_validate(service)
    for service in [
        {"service_name": R, "intents": [
            {"name": "FindRestaurants", "is_transactional": False,
             "required_slots": ["city", "cuisine"], "result_slots": ["restaurant_name"]},
            {"name": "ReserveRestaurant", "is_transactional": True,
             "description": "Reserve a table at a restaurant",
             "required_slots": ["restaurant_name", "location", "time"],
             "optional_slots": {"number_of_seats": "2"}}]},
        {"service_name": H, "intents": [
            {"name": "SearchHouse", "is_transactional": False, "required_slots": ["where_to"]},
            {"name": "BookHouse", "is_transactional": True, "required_slots": ["where_to"]}]},
    ]
}  # fmt: skip


def user(text: str, *frames: dict[str, Any]) -> dict[str, Any]:
    return {"s": "U", "t": text, "f": list(frames)}


def system(text: str, *frames: dict[str, Any]) -> dict[str, Any]:
    return {"s": "S", "t": text, "f": list(frames)}


def uf(service: str, intent: str, **slots: str | list[str]) -> dict[str, Any]:
    """A compact user frame; a slot given as a list keeps its equivalent values."""
    values = {slot: value if isinstance(value, list) else [value] for slot, value in slots.items()}
    return {"svc": service, "intent": intent, "sv": values, "req": []}


def sf(service: str, *acts: str | tuple[str, str, str], call: str | None = None) -> dict[str, Any]:
    """A compact system frame: acts as ``"NOTIFY_SUCCESS"`` or ``(act, slot, value)``."""
    frame: dict[str, Any] = {
        "svc": service,
        "act": [[a, "", []] if isinstance(a, str) else [a[0], a[1], [a[2]]] for a in acts],
    }
    if call is not None:
        frame["call"] = [call, {}]
    return frame


def convert(*utterances: dict[str, Any], schema: Any = SCHEMA) -> AtodDialogue:
    dialogue = sgd_compact_dialogue({"dialogue_id": "t-1", "turns": list(utterances)})
    return sgd_to_atod(dialogue, schema)


def statuses(atod: AtodDialogue, goal: str = "g1") -> list[str]:
    return [turn.all_goals[goal] for turn in atod.turns]


def changes(atod: AtodDialogue) -> list[list[tuple[str, str]]]:
    return [[(c.goal_id, c.new_status) for c in turn.goal_status_changes] for turn in atod.turns]


RESERVE = uf(R, "ReserveRestaurant", restaurant_name="Sino", location="San Jose",
             time=["11:30 am", "half past 11"], number_of_seats="2")  # fmt: skip
CONFIRM = sf(R, ("CONFIRM", "restaurant_name", "Sino"), ("CONFIRM", "time", "11:30 am"))


def test_transaction_confirmed_then_done() -> None:
    atod = convert(
        user("Book Sino in San Jose for 2 at half past 11.", RESERVE),
        system("Confirming: Sino, 11:30 am?", CONFIRM),
        user("Yes, thanks.", RESERVE),
        system("Your table is booked.", sf(R, "NOTIFY_SUCCESS", call="ReserveRestaurant")),
        user("That's all.", uf(R, "NONE")),
        system("Bye.", sf(R, "GOODBYE")),
    )
    assert [(t.turn_id, t.speaker) for t in atod.turns] == [
        (1, "USER"), (2, "SYSTEM"), (3, "USER"), (4, "SYSTEM"), (5, "USER"), (6, "SYSTEM")
    ]  # fmt: skip
    assert atod.turns[1].utterance == "Confirming: Sino, 11:30 am?"
    # Pending while the user's decision is awaited; the call settles it.
    assert statuses(atod) == ["open", "pending", "pending", "completed", "completed", "completed"]
    assert changes(atod) == [
        [("g1", "open")],
        [("g1", "pending")],
        [],
        [("g1", "completed")],
        [],
        [],
    ]
    [goal] = atod.goal_list
    assert (goal.id, goal.domain, goal.intent) == ("g1", R, "ReserveRestaurant")
    assert goal.slots == ["restaurant_name", "location", "time"]  # the schema's required slots
    assert goal.slot_values == {"restaurant_name": "Sino", "location": "San Jose",
                                "time": "11:30 am", "number_of_seats": "2"}  # fmt: skip
    assert goal.content == (
        "ReserveRestaurant in Restaurants_2: restaurant_name=Sino, location=San Jose, "
        "time=11:30 am, number_of_seats=2"
    )
    assert goal.core_content == "Reserve a table at a restaurant"
    assert atod.metadata["num_goals"] == 1 and atod.metadata["num_turns"] == 6


def test_confirmation_declined_reopens_and_failure_can_be_retried() -> None:
    atod = convert(
        user("Book Sino.", RESERVE),
        system("Sino at 11:30 am?", CONFIRM),
        user("No, make it 3 people.", RESERVE),
        system("Sino for 3 at 11:30 am?", CONFIRM),
        user("Yes.", RESERVE),
        system("Sorry, that failed. Try 12 pm?",
               sf(R, "NOTIFY_FAILURE", ("OFFER", "time", "12 pm"), call="ReserveRestaurant")),
        user("Sure, 12 pm.", RESERVE),
        system("Sino at 12 pm?", CONFIRM),
        user("Yes.", RESERVE),
        system("Done.", sf(R, "NOTIFY_SUCCESS", call="ReserveRestaurant")),
    )  # fmt: skip
    assert statuses(atod) == [
        "open", "pending", "open", "pending", "pending", "failed", "open", "pending", "pending",
        "completed",
    ]  # fmt: skip


def test_failure_the_user_accepts_stays_failed() -> None:
    atod = convert(
        user("Book Sino.", RESERVE),
        system("Sino at 11:30 am?", CONFIRM),
        user("Yes.", RESERVE),
        system("Sorry, that failed. Anything else?",
               sf(R, "NOTIFY_FAILURE", "REQ_MORE", call="ReserveRestaurant")),
        user("Okay, thanks anyway.", RESERVE),  # SGD keeps the intent active; no retry follows
        system("Anything else?", sf(R, "REQ_MORE")),
        user("No.", uf(R, "NONE")),
        system("Bye.", sf(R, "GOODBYE")),
    )  # fmt: skip
    assert statuses(atod)[3:] == ["failed"] * 5
    assert atod.final_statuses() == {"g1": "failed"}


FIND = uf(R, "FindRestaurants", city="San Jose", cuisine="Chinese")


def test_lookup_completes_on_the_results_the_user_settles_on() -> None:
    atod = convert(
        user("Find Chinese food in San Jose.", FIND),
        system("I found 3. How about Sino?", sf(R, ("OFFER", "restaurant_name", "Sino"),
               ("INFORM_COUNT", "count", "3"), call="FindRestaurants")),
        user("Anything else?", FIND),  # REQUEST_ALTS: the first offer is turned down
        system("How about Dragon?", sf(R, ("OFFER", "restaurant_name", "Dragon"))),
        user("Dragon it is. Book it for 11:30.",
             uf(R, "ReserveRestaurant", restaurant_name="Dragon", time="11:30 am")),
        system("Dragon at 11:30 am?", sf(R, ("CONFIRM", "restaurant_name", "Dragon"))),
        user("Yes.", uf(R, "ReserveRestaurant", restaurant_name="Dragon", time="11:30 am")),
        system("Booked.", sf(R, "NOTIFY_SUCCESS", call="ReserveRestaurant")),
    )  # fmt: skip
    assert statuses(atod, "g1") == ["open", "open", "open"] + ["completed"] * 5
    assert statuses(atod, "g2")[4:] == ["open", "pending", "pending", "completed"]
    find, reserve = atod.goal_list
    assert find.slots == ["city", "cuisine"]
    # Dragon was first said by the system for the search, so the booking depends on it.
    assert (find.dependencies, reserve.dependencies) == ([], ["g1"])


def test_lookup_that_finds_nothing_fails_and_can_be_retried() -> None:
    no_results = sf(R, "NOTIFY_FAILURE", "REQ_MORE", call="FindRestaurants")
    atod = convert(
        user("Find Chinese food in San Jose.", FIND),
        system("Sorry, I found nothing.", no_results),
        user("Try Korean then.", uf(R, "FindRestaurants", city="San Jose", cuisine="Korean")),
        system("Seoul Garden?", sf(R, ("OFFER", "restaurant_name", "Seoul Garden"),
                                   call="FindRestaurants")),
    )  # fmt: skip
    assert statuses(atod) == ["open", "failed", "open", "completed"]


def test_declined_offers_then_leaving_abandons_the_lookup() -> None:
    atod = convert(
        user("Find Chinese food in San Jose.", FIND),
        system("How about Sino?", sf(R, ("OFFER", "restaurant_name", "Sino"),
                                     call="FindRestaurants")),
        user("Anything else?", FIND),
        system("There is nothing else.", sf(R, "NOTIFY_FAILURE", "REQ_MORE",
                                            call="FindRestaurants")),
        user("Then find me a house in Paris.", uf(H, "SearchHouse", where_to="Paris")),
        system("Maison Bleue?", sf(H, ("OFFER", "house", "Maison Bleue"), call="SearchHouse")),
    )  # fmt: skip
    # "Nothing else" after results is not a failed search; leaving unsatisfied abandons it.
    assert statuses(atod, "g1") == ["open", "open", "open", "open", "abandoned", "abandoned"]
    assert statuses(atod, "g2") == ["not_mentioned"] * 4 + ["open", "completed"]
    assert changes(atod)[4] == [("g1", "abandoned"), ("g2", "open")]


def test_results_taken_to_the_same_services_transaction_complete_the_lookup() -> None:
    atod = convert(
        user("Find Chinese food in San Jose.", FIND),
        system("How about Sino?", sf(R, ("OFFER", "restaurant_name", "Sino"),
                                     call="FindRestaurants")),
        user("Anything else?", FIND),
        system("There is nothing else.", sf(R, "NOTIFY_FAILURE", call="FindRestaurants")),
        user("Then book Sino.", RESERVE),
        system("Sino at 11:30 am?", CONFIRM),
    )  # fmt: skip
    assert statuses(atod, "g1") == ["open"] * 4 + ["completed"] * 2


def test_moving_on_without_returning_abandons_but_interleaving_does_not() -> None:
    house = uf(H, "BookHouse", where_to="Paris")
    atod = convert(
        user("Book Sino.", RESERVE),
        system("For what time?", sf(R, ("REQUEST", "time", ""))),
        user("Wait, first book a house in Paris.", house),
        system("Booked the house.", sf(H, "NOTIFY_SUCCESS", call="BookHouse")),
        user("Back to Sino then.", RESERVE),
        system("Sino at 11:30 am?", CONFIRM),
        user("Actually, find me another house.", uf(H, "SearchHouse", where_to="Lyon")),
        system("Maison Bleue?", sf(H, ("OFFER", "house", "Maison Bleue"), call="SearchHouse")),
    )  # fmt: skip
    # Suspended while the house is booked (the user comes back), abandoned at the last move.
    assert statuses(atod, "g1") == [
        "open", "open", "open", "open", "open", "pending", "abandoned", "abandoned"
    ]  # fmt: skip
    assert statuses(atod, "g2")[2:4] == ["open", "completed"]


def test_dropped_goal_is_abandoned_and_reopens_when_the_user_returns() -> None:
    atod = convert(
        user("Book Sino.", RESERVE),
        system("Sino at 11:30 am?", CONFIRM),
        user("No, forget it. Find a house in Paris.",
             uf(R, "NONE"), uf(H, "SearchHouse", where_to="Paris")),
        system("Maison Bleue?", sf(H, ("OFFER", "house", "Maison Bleue"), call="SearchHouse")),
        user("Nice. Let's book Sino after all.", RESERVE),
        system("Sino at 11:30 am?", CONFIRM),
        user("Yes.", RESERVE),
        system("Booked.", sf(R, "NOTIFY_SUCCESS", call="ReserveRestaurant")),
    )  # fmt: skip
    assert statuses(atod) == [
        "open", "pending", "abandoned", "abandoned", "open", "pending", "pending", "completed"
    ]  # fmt: skip


def test_dialogues_without_service_calls_use_the_acts() -> None:
    # SGD's pre-2020 files record no service calls: OFFER and NOTIFY_* decide on their own.
    atod = convert(
        user("Find Chinese food in San Jose.", FIND),
        system("How about Sino?", sf(R, ("OFFER", "restaurant_name", "Sino"))),
        user("Book it.", RESERVE),
        system("Sino at 11:30 am?", CONFIRM),
        user("Yes.", RESERVE),
        system("Booked.", sf(R, "NOTIFY_SUCCESS")),
    )  # fmt: skip
    assert statuses(atod, "g1") == ["open"] + ["completed"] * 5
    assert statuses(atod, "g2")[2:] == ["open", "pending", "pending", "completed"]


def test_without_a_schema_the_intent_name_decides() -> None:
    assert not is_transactional(R, "FindRestaurants")
    assert is_transactional(R, "ReserveRestaurant")
    assert not is_transactional("RideSharing_1", "GetRide")  # the name rule's known miss
    ride = ServiceSchema.model_validate(
        {
            "service_name": "RideSharing_1",
            "intents": [{"name": "GetRide", "is_transactional": True}],
        }
    )
    assert is_transactional("RideSharing_1", "GetRide", {"RideSharing_1": ride})
    atod = convert(
        user("Find Chinese food in San Jose.", FIND),
        system("How about Sino?", sf(R, ("OFFER", "restaurant_name", "Sino"))),
        schema=None,
    )
    assert statuses(atod) == ["open", "completed"]
    assert atod.goal_list[0].slots == ["city", "cuisine"]  # the slots the user filled
    assert atod.goal_list[0].core_content == "FindRestaurants"


def test_malformed_frames_and_non_sgd_dialogues_name_the_field() -> None:
    dialogue = sgd_compact_dialogue(
        {"dialogue_id": "x", "turns": [user("Hi", {"svc": R, "sv": {}}), system("Hello")]}
    )
    with pytest.raises(FieldError) as caught:
        sgd_to_atod(dialogue)
    assert caught.value.field == "turns.0.metadata.sgd_user_frames.0.intent"
    plain = Dialogue.model_validate(
        {"dialogue_id": "m", "turns": [{"turn_number": 1, "user_msg": "hi"}]}
    )
    with pytest.raises(FieldError, match="is this SGD data"):
        sgd_to_atod(plain)


def test_load_sgd_schema(tmp_path: Path) -> None:
    path = tmp_path / "schema.json"
    raw = [service.model_dump() for service in SCHEMA.values()]
    path.write_text(json.dumps(raw), encoding="utf-8")
    assert load_sgd_schema(path) == SCHEMA
    raw[1]["intents"][0]["is_transactional"] = "sometimes"
    path.write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(DatasetFormatError, match=r"1\.intents\.0\.is_transactional"):
        load_sgd_schema(path)
    path.write_text(json.dumps([raw[0], raw[0]]), encoding="utf-8")
    with pytest.raises(DatasetFormatError, match="listed twice"):
        load_sgd_schema(path)
    with pytest.raises(DatasetFormatError, match="no such file"):
        load_sgd_schema(tmp_path / "missing.json")


def test_converted_dialogues_round_trip_through_the_atod_loader(tmp_path: Path) -> None:
    atod = convert(user("Book Sino.", RESERVE), system("Sino at 11:30 am?", CONFIRM))
    path = tmp_path / "gold.jsonl"
    path.write_text(atod.model_dump_json() + "\n", encoding="utf-8")
    assert list(load_atod(path)) == [atod]


# --- SGD dev: every dialogue ----------------------------------------------------------------


@pytest.mark.slow
def test_sgd_dev_converts_with_valid_lifecycles(capsys: pytest.CaptureFixture[str]) -> None:
    folder = data_dir() / "sgd"
    if not (folder / "sgd_dev.jsonl.gz").is_file() or not (folder / "schema_dev.json").is_file():
        pytest.skip(f"SGD reference data not found in {folder} (set TODEVAL_DATA_DIR)")
    schema = load_sgd_schema(folder / "schema_dev.json")
    assert {"Restaurants_2", "RideSharing_1"} <= set(schema)
    assert schema["RideSharing_1"].intent("GetRide").is_transactional  # type: ignore[union-attr]
    dialogues, errors = split_records(load_dialogues(folder / "sgd_dev.jsonl.gz"))
    assert errors == [] and len(dialogues) == 2482

    final: dict[str, int] = {}
    for dialogue in dialogues:
        atod = sgd_to_atod(dialogue, schema)
        ids = [goal.id for goal in atod.goal_list]
        assert ids == [f"g{n}" for n in range(1, len(ids) + 1)]
        assert [[goal.domain, goal.intent] for goal in atod.goal_list] == dialogue.metadata["goals"]
        utterances = sum(2 if turn.response else 1 for turn in dialogue.turns)
        assert [turn.turn_id for turn in atod.turns] == list(range(1, utterances + 1))
        before = dict.fromkeys(ids, "not_mentioned")
        for turn in atod.turns:
            assert list(turn.all_goals) == ids
            moved = {k: v for k, v in turn.all_goals.items() if v != before[k]}
            assert {c.goal_id: c.new_status for c in turn.goal_status_changes} == moved
            for goal_id, status in moved.items():
                assert status in VALID_TRANSITIONS[before[goal_id]], (atod.dialogue_id, turn)
            before = dict(turn.all_goals)
        for status in before.values():
            assert status in TRACKED_STATUSES  # every goal was mentioned
            final[status] = final.get(status, 0) + 1
        for number, goal in enumerate(atod.goal_list):
            assert set(goal.dependencies) <= set(ids[:number])  # earlier goals only
        # The name rule gives the same statuses as the schema on dev.
        assert [t.all_goals for t in sgd_to_atod(dialogue).turns] == [
            t.all_goals for t in atod.turns
        ]
    assert final["completed"] > 0.9 * sum(final.values())
    assert final.get("failed", 0) > 0
    assert capsys.readouterr() == ("", "")
