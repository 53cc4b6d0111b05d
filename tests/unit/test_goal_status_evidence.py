"""Goal status from the dialogue's own evidence, with two goals live at once (ATOD §5.2).

Hand-made SGD-style dialogues run through the goal-tracking graph with the local judges: the
system's confirmation completes the goal it is about (not the one touched last), its failure
notice fails it, a pause leaves a goal as it is, and "never mind the hotel" drops the hotel only.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from todeval.graphs.goal_tracking import build_goal_tracking_graph
from todeval.nodes.context import Context
from todeval.nodes.goal_tracking.tracker import goal_memory


def _service(name: str, description: str, intents: list[tuple[str, str, bool]]) -> dict[str, Any]:
    return {
        "service_name": name,
        "description": description,
        "slots": [],
        "intents": [
            {"name": intent, "description": text, "is_transactional": transactional,
             "required_slots": []}
            for intent, text, transactional in intents
        ],
    }  # fmt: skip


SCHEMA = [
    _service(
        "Restaurants_9",
        "A leading provider for restaurant search and reservations",
        [
            ("FindRestaurants", "Find a restaurant of a particular cuisine in a city", False),
            ("ReserveRestaurant", "Reserve a table at a restaurant", True),
        ],
    ),
    _service(
        "Hotels_9",
        "A popular service for searching and reserving rooms in hotels",
        [
            ("SearchHotel", "Find a hotel at a given location", False),
            ("ReserveHotel", "Reserve rooms at a selected hotel", True),
        ],
    ),
]

TABLE = "I'd like to reserve a table for two at Sino in San Jose at 7 pm."
ROOM = "I also want to reserve a hotel room in San Jose."


@pytest.fixture
def context(tmp_path: Path) -> Iterator[Context]:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(SCHEMA))
    yield Context(
        schema_path=str(schema),
        settings={
            "goal_tracking": {
                "goal_memory_path": str(tmp_path / "goal_memory.sqlite"),
                "vector_backend": "memory",
            }
        },
    )
    goal_memory.cache_clear()


def _run(context: Context, dialogue: list[tuple[str, str]], name: str) -> list[dict[str, Any]]:
    """Run the dialogue offline (closing audit included); the goals in memory at the end."""
    graph = build_goal_tracking_graph().compile(checkpointer=InMemorySaver())
    output = graph.invoke(
        {
            "dialogue_id": name,
            "utterances": [{"speaker": speaker, "text": text} for speaker, text in dialogue],
            "final": True,
        },
        {"configurable": {"thread_id": name}},
        context=context,
    )
    goals: list[dict[str, Any]] = output["goals"]
    assert len({goal["intent"] for goal in goals}) == len(goals), "one goal per intent"
    return goals


def _track(context: Context, dialogue: list[tuple[str, str]], name: str) -> dict[str, str]:
    """Each goal's final status, by intent."""
    return {goal["intent"]: goal["status"] for goal in _run(context, dialogue, name)}


def _history(context: Context, dialogue: list[tuple[str, str]], name: str) -> dict[str, Any]:
    """Each goal's status history, by intent."""
    return {
        goal["intent"]: [entry["status"] for entry in goal["status_history"]]
        for goal in _run(context, dialogue, name)
    }


def test_a_confirmation_completes_its_goal_not_the_one_touched_last(context: Context) -> None:
    dialogue = [
        ("USER", TABLE),
        ("SYSTEM", "Please confirm: a table for 2 at Sino in San Jose at 7 pm."),
        ("USER", "Yes, that's right. " + ROOM),
        ("SYSTEM", "Your table is booked."),
    ]
    statuses = _track(context, dialogue, "booked")
    assert statuses["ReserveRestaurant"] == "completed"
    assert statuses["ReserveHotel"] == "open"  # the live goal touched last is left alone


def test_then_the_hotel_reservation_is_confirmed(context: Context) -> None:
    dialogue = [
        ("USER", TABLE),
        ("SYSTEM", "Please confirm: a table for 2 at Sino in San Jose at 7 pm."),
        ("USER", "Yes, that's right. " + ROOM),
        ("SYSTEM", "Your table is booked. Which hotel would you like?"),
        ("USER", "The Fairmont, please."),
        ("SYSTEM", "Please confirm: 1 room at The Fairmont San Jose, checking in today."),
        ("USER", "Yes."),
        ("SYSTEM", "Your reservation is confirmed."),
    ]
    statuses = _track(context, dialogue, "confirmed")
    assert statuses == {"ReserveRestaurant": "completed", "ReserveHotel": "completed"}


def test_a_failure_notice_fails_the_goal_it_names(context: Context) -> None:
    dialogue = [
        ("USER", ROOM),
        ("SYSTEM", "Please confirm: 1 room at The Fairmont San Jose, checking in today."),
        ("USER", "Yes. " + TABLE),
        ("SYSTEM", "I'm sorry, I couldn't book the hotel room. Anything else?"),
    ]
    statuses = _track(context, dialogue, "failed")
    assert statuses["ReserveHotel"] == "failed"
    assert statuses["ReserveRestaurant"] == "open"


def test_a_pause_does_not_abandon_a_goal(context: Context) -> None:
    dialogue = [
        ("USER", TABLE),
        ("SYSTEM", "Please confirm: a table for 2 at Sino in San Jose at 7 pm."),
        ("USER", "Hmm, let me think about it."),
        ("SYSTEM", "Sure, take your time."),
        ("USER", "Can you find me a hotel in San Jose?"),
        ("SYSTEM", "I found 5 hotels. The Fairmont San Jose is a 4 star hotel."),
        ("USER", "Great, thanks. That's all for now."),
    ]
    statuses = _track(context, dialogue, "pause")
    assert statuses["ReserveRestaurant"] == "pending"  # still waiting on the user
    assert statuses["SearchHotel"] == "completed"


def test_never_mind_the_hotel_abandons_the_hotel_goal_only(context: Context) -> None:
    dialogue = [
        ("USER", TABLE),
        ("SYSTEM", "What time would you like?"),
        ("USER", ROOM),
        ("SYSTEM", "Which hotel would you like?"),
        ("USER", "Actually, never mind the hotel."),
        ("SYSTEM", "Okay. Anything else?"),
    ]
    statuses = _track(context, dialogue, "never-mind")
    assert statuses["ReserveHotel"] == "abandoned"
    assert statuses["ReserveRestaurant"] == "open"


def test_a_failed_booking_tried_again_and_confirmed_ends_completed(context: Context) -> None:
    dialogue = [
        ("USER", TABLE),
        ("SYSTEM", "Sorry, I couldn't book a table at 7 pm. Would 8 pm work?"),
        ("USER", "Yes, 8 pm is fine."),
        ("SYSTEM", "Please confirm: a table for 2 at Sino at 8 pm."),
        ("USER", "Yes."),
        ("SYSTEM", "Your table is booked."),
    ]
    history = _history(context, dialogue, "retry")
    assert history["ReserveRestaurant"] == ["open", "failed", "open", "pending", "completed"]


def test_an_affirmed_confirmation_completes_when_the_words_do_not_say_booked(
    context: Context,
) -> None:
    confirm = ("SYSTEM", "Please confirm: a table for 2 at Sino at 7 pm.")
    affirmed = [("USER", TABLE), confirm, ("USER", "That's right."), ("SYSTEM", "Enjoy!")]
    amended = [("USER", TABLE), confirm, ("USER", "No, make it 8 pm."), ("SYSTEM", "Enjoy!")]
    assert _track(context, affirmed, "affirmed")["ReserveRestaurant"] == "completed"
    assert _track(context, amended, "amended")["ReserveRestaurant"] == "pending"


def test_the_systems_confirmation_is_evidence_of_a_transaction_memory_missed(
    context: Context,
) -> None:
    dialogue = [
        ("USER", "Can you find me an Italian restaurant in San Jose?"),
        ("SYSTEM", "How about Sino in San Jose?"),
        ("USER", "Sounds good."),  # the booking is never asked for in so many words
        ("SYSTEM", "Please confirm: a table for 2 at Sino at 7 pm today."),
        ("USER", "Yes."),
        ("SYSTEM", "Your table is booked."),
    ]
    history = _history(context, dialogue, "inserted")
    assert history == {
        "FindRestaurants": ["open", "completed"],
        "ReserveRestaurant": ["open", "pending", "completed"],
    }


def test_act_evidence_margins_equal_the_per_gram_definition() -> None:
    import numpy as np

    from todeval.nodes.goal_tracking.judges.goal_extraction.status_cues import system_act_model

    model = system_act_model()
    rows = range(0, model.weights.shape[0], 97)
    for column in range(len(model.labels)):
        margins = model._margins(column)
        for row in rows:
            others = np.delete(model.weights[row], column).mean()
            assert float(margins[row]) == float(model.weights[row, column] - others)


def test_act_evidence_is_the_best_gram_without_markers() -> None:
    """The evidence n-gram: the largest positive margin among the grams with no marker."""
    from todeval.nodes.goal_tracking.judges.goal_extraction.status_cues import (
        system_act_model,
        text_features,
    )

    model = system_act_model()
    texts = [
        "Your table has been booked.",
        "Sorry, I could not make the reservation.",
        "Please confirm: 2 tickets for tonight.",
        "I found 3 hotels you may like.",
        "The movie has been rented",
        "",
    ]
    for text in texts:
        known = model.known(text_features(text))
        for column, act in enumerate(model.labels):
            margins = model._margins(column)
            best, weight = "", 0.0
            for gram, row in known:
                if "<s>" in gram or "</s>" in gram or "_ed" in gram:
                    continue
                if float(margins[row]) > weight:
                    best, weight = gram, float(margins[row])
            assert model.evidence_of_known(known, act) == best
