"""Memory recall over slots, status and history (ATOD §6.2), per query and through the report."""

from __future__ import annotations

from typing import Any

from todeval.evals.goal_tracking_schema import AtodDialogue
from todeval.evals.metrics.goal_tracking.memory_state import (
    aspect_matches,
    gold_memory_state,
    memory_state_counts,
    memory_state_report,
)
from todeval.evals.metrics.goal_tracking.report import goal_tracking_report

GOLD = AtodDialogue.model_validate(
    {
        "dialogue_id": "d1",
        "goal_list": [
            {"id": "g1", "domain": "Restaurants_1", "intent": "ReserveRestaurant",
             "slot_values": {"restaurant_name": "Sino", "time": "7 pm"}},
            {"id": "g2", "domain": "RideSharing_1", "intent": "GetRide"},
        ],
        "turns": [
            {"turn_id": 1, "speaker": "USER", "utterance": "Book Sino at 7 pm.",
             "goal_status_changes": [{"goal_id": "g1", "new_status": "open"}],
             "all_goals": {"g1": "open", "g2": "not_mentioned"}},
            {"turn_id": 2, "speaker": "SYSTEM", "utterance": "Booking, one moment.",
             "goal_status_changes": [{"goal_id": "g1", "new_status": "pending"}],
             "all_goals": {"g1": "pending", "g2": "not_mentioned"}},
            {"turn_id": 3, "speaker": "USER", "utterance": "Also a cab there.",
             "goal_status_changes": [{"goal_id": "g2", "new_status": "open"}],
             "all_goals": {"g1": "pending", "g2": "open"}},
            {"turn_id": 4, "speaker": "USER", "utterance": "Is Sino booked?",
             "goal_status_changes": [{"goal_id": "g1", "new_status": "completed"}],
             "all_goals": {"g1": "completed", "g2": "open"}},
        ],
    }
)  # fmt: skip

RIGHT = {"status": "pending", "history": ["open", "pending"], "slots": {"time": "7 PM"}}


def test_the_gold_state_is_the_one_before_the_utterance() -> None:
    assert gold_memory_state(GOLD, "g1", 4) == {
        "status": "pending",
        "history": ["open", "pending"],
        "slots": {"restaurant_name": "Sino", "time": "7 pm"},
    }
    assert gold_memory_state(GOLD, "g1", 2)["status"] == "open"  # type: ignore[index]
    assert gold_memory_state(GOLD, "g2", 3) is None  # not mentioned yet
    assert gold_memory_state(GOLD, "g9", 4) is None


def test_each_aspect_can_fail_on_its_own() -> None:
    state = gold_memory_state(GOLD, "g1", 4)
    assert aspect_matches(RIGHT, state) == {"status": True, "history": True, "slots": True}
    repeated = RIGHT | {"history": ["open", "open", "pending"]}  # repeats merged
    assert aspect_matches(repeated, state)["history"] is True
    assert aspect_matches(RIGHT | {"status": "open"}, state)["status"] is False
    assert aspect_matches(RIGHT | {"history": ["pending"]}, state)["history"] is False
    assert aspect_matches(RIGHT | {"slots": {"time": "8 pm"}}, state)["slots"] is False
    assert aspect_matches(RIGHT | {"slots": {}}, state)["slots"] is True  # not said yet: no error
    no_slots = gold_memory_state(GOLD, "g2", 4)
    assert aspect_matches(RIGHT | {"status": "open", "history": ["open"]}, no_slots) == {
        "status": True,
        "history": True,
        "slots": None,  # gold has no values to compare
    }


def test_counts_need_the_right_goal_and_the_right_state() -> None:
    state = gold_memory_state(GOLD, "g1", 4)
    queries: list[dict[str, Any]] = [
        {"retrieved": "g1", "expected": {"g1"}, "held": RIGHT, "gold_state": state},
        {"retrieved": "g1", "expected": {"g1"}, "held": RIGHT | {"status": "open"},
         "gold_state": state},
        {"retrieved": "g2", "expected": {"g1"}, "held": RIGHT, "gold_state": state},
        {"retrieved": None, "expected": set(), "held": None, "gold_state": None},
        {"retrieved": "g1", "expected": None, "held": RIGHT, "gold_state": state},
    ]  # fmt: skip
    counts = memory_state_counts(queries)
    assert counts["state_judged"] == 4 and counts["state_correct"] == 2
    report = memory_state_report(counts)
    assert report["memory_recall_state_accuracy"] == 0.5
    assert report["memory_recall_by_aspect"] == {"status": 0.5, "history": 1.0, "slots": 1.0}
    assert memory_state_report({})["memory_recall_state_accuracy"] is None


def test_the_report_scores_what_memory_held_against_the_gold() -> None:
    goal = {"goal_id": "m1", "service": "Restaurants_1", "intent": "ReserveRestaurant",
            "description": "book sino", "slots": {}, "status": "completed",
            "status_history": [{"turn": 1, "status": "open"}, {"turn": 4, "status": "completed"}],
            "dependencies": []}  # fmt: skip
    ride = {"goal_id": "m2", "service": "RideSharing_1", "intent": "GetRide",
            "description": "a cab", "slots": {}, "status": "open",
            "status_history": [{"turn": 3, "status": "open"}], "dependencies": []}  # fmt: skip
    state = gold_memory_state(GOLD, "g1", 4)
    forgot = {"status": "open", "history": ["open"], "slots": {"restaurant_name": "Sino"}}
    result = {
        "dialogue_id": "d1",
        "gold": GOLD,
        "goals": [goal, ride],
        "turns": [],
        "costs": [],
        "queries": [
            {"retrieved": "g1", "expected": {"g1"}, "held": forgot, "gold_state": state},
            {"retrieved": None, "expected": set(), "held": None, "gold_state": None},
        ],
    }
    report = goal_tracking_report([result])
    assert report["memory_recall_accuracy"] == 1.0  # the right goals were retrieved
    assert report["memory_recall_state_accuracy"] == 0.5  # but g1's pending step was missed
    assert report["memory_recall_by_aspect"] == {"status": 0.0, "history": 0.0, "slots": 1.0}
