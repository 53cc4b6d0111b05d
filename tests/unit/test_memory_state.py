"""JGA from the predicted dialogue state (MAP, paper 001, §5.1), beside the mention reading."""

from __future__ import annotations

import pytest

from todeval.evals.metrics.memory.scores import item_scores, memory_summary
from todeval.evals.metrics.memory.state import state_scores, values_match
from todeval.nodes.memory.dialogue_state import predicted_state, read_dialogue_state

GOLD = {"restaurant_name": "Sino", "city": "San Jose", "time": "19:00"}
CANDIDATES = [
    ("restaurant_name", "Sino"),
    ("city", "San Jose"),
    ("city", "Fremont"),
    ("time", "7 pm"),
    ("number_of_seats", "2"),
]

ITEM = {"eval_id": "e1", "relevant_session_ids": ["s1"], "relevant_units": 3}


@pytest.mark.parametrize(
    ("predicted", "gold", "slot", "expected"),
    [
        ("7 pm", "19:00", "time", True),
        ("two", "2", "number_of_seats", True),
        ("Sino", "Sino Peruvian Restaurant & Bar", "restaurant_name", False),
        ("True", "False", "has_wifi", False),
        ("true", "True", "has_wifi", True),
        ("San Jose", "san jose", "city", True),
    ],
)
def test_values_match(predicted: str, gold: str, slot: str, expected: bool) -> None:
    assert values_match(predicted, gold, slot) is expected


def test_jga_is_an_exact_state_match_and_an_unasked_slot_breaks_it() -> None:
    exact = {"restaurant_name": "Sino", "city": "San Jose", "time": "7 pm"}
    assert state_scores(exact, GOLD) == {
        "jga": 1.0,
        "state_slot_accuracy": 1.0,
        "state_extra_slots": 0.0,
    }
    extra = exact | {"number_of_seats": "2"}
    assert state_scores(extra, GOLD) == {
        "jga": 0.0,
        "state_slot_accuracy": 1.0,
        "state_extra_slots": 1.0,
    }
    wrong = exact | {"city": "Fremont"}
    assert state_scores(wrong, GOLD)["state_slot_accuracy"] == pytest.approx(2 / 3)
    assert state_scores(None, GOLD)["jga"] is None and state_scores(exact, {})["jga"] is None


def test_a_free_text_response_is_read_into_a_state_with_ambiguous_slots_left_out() -> None:
    response = "A table at Sino at 7 pm, in San Jose or Fremont?"
    state, ambiguous = read_dialogue_state(response, CANDIDATES)
    assert state == {"restaurant_name": "Sino", "time": "7 pm"} and ambiguous == ["city"]
    # "2" alone is no party size: a bare number counts only beside the slot's words.
    state, _ = read_dialogue_state("Sino, San Jose, 2 of March?", CANDIDATES)
    assert "number_of_seats" not in state
    state, _ = read_dialogue_state("Sino, 2 seats, in San Jose.", CANDIDATES)
    assert state["number_of_seats"] == "2"


def test_predicted_state_prefers_the_readers_own_and_keeps_task_attributes() -> None:
    reader = {"restaurant_name": "Sino", "generic_time": "7 pm"}
    state, source, _ = predicted_state(reader, "text", CANDIDATES, ["restaurant_name", "time"])
    assert (state, source) == ({"restaurant_name": "Sino"}, "reader")
    state, source, _ = predicted_state(None, "Sino at 7 pm.", CANDIDATES, [])
    assert (state, source) == ({"restaurant_name": "Sino", "time": "7 pm"}, "response")
    assert predicted_state(None, None, CANDIDATES, []) == (None, "none", [])


def test_state_jga_and_mention_jga_can_disagree_either_way() -> None:
    # Both cities named: every gold value is mentioned, but the state commits to no city.
    hedged = {
        **ITEM,
        "task_goal": GOLD,
        "response": "Sino at 7 pm, in San Jose or Fremont?",
        "dialogue_state": {"restaurant_name": "Sino", "time": "7 pm"},
    }
    scores = item_scores(hedged)
    assert scores["jga_mention"] == 1.0 and scores["jga"] == 0.0
    # The state is right though the response words the time differently from the gold.
    worded = {
        **ITEM,
        "task_goal": {"time": "19:00"},
        "response": "See you in the evening.",
        "dialogue_state": {"time": "7 pm"},
    }
    scores = item_scores(worded)
    assert scores["jga"] == 1.0 and scores["jga_mention"] == 0.0
    summary = memory_summary([hedged, worded])
    assert summary["jga"] == 0.5 and summary["jga_mention"] == 0.5
