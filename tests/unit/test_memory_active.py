"""The memory-active graph: re-ranking, refinement, and a reader that never sees the gold."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from todeval.evals.memory_schema import MemoryUnit, MsTodSession, ScoredUnit
from todeval.evals.metrics.memory.scores import slot_value_mentioned
from todeval.graphs.memory import build_memory_graph
from todeval.nodes.context import Context
from todeval.nodes.memory.bank import memory_bank
from todeval.nodes.memory.judges.units import local_memory_units
from todeval.nodes.memory.memory_active import rerank

STORED = MsTodSession(
    session_id="s1",
    domain="Restaurants_1",
    intent="ReserveRestaurant",
    content=[{"speaker": "user", "utterance": "A table at Sino in San Jose, please."}],
    task_goal={"restaurant_name": "Sino", "city": "San Jose"},
)


@pytest.fixture
def context() -> Iterator[Context]:
    memory_bank.cache_clear()
    context = Context(
        judges={"memory_judger": "none"},
        settings={
            "memory": {
                "bank_backend": "memory",
                "bank_collection": "t",
                "bank_source": "task_goal_oracle",  # the units below are task-goal units
            }
        },
    )
    memory_bank(None, "memory", "t").add_units(local_memory_units("u1", STORED))
    yield context
    memory_bank.cache_clear()


def _run(context: Context, **extra: Any) -> dict[str, Any]:
    graph = build_memory_graph().compile(checkpointer=InMemorySaver())
    utterance = "Hi again, it's about the reserve restaurant for Sino. For 7 pm please."
    return graph.invoke(
        {
            "individual_id": "u1",
            "intent": "ReserveRestaurant",
            "context": [{"speaker": "user", "utterance": utterance}],
            **extra,
        },
        {"configurable": {"thread_id": "t1"}},
        context=context,
    )


def test_rerank_blends_retrieval_and_judger_by_alpha() -> None:
    unit = MemoryUnit(
        unit_id="u/s/x", individual_id="u", session_id="s", intent="I",
        intent_description="d", question="q", answer="a",
    )  # fmt: skip
    row = ScoredUnit(unit=unit, retrieval_score=0.8, final_score=0.8)
    assert rerank(row, 0.2, 0.25).final_score == pytest.approx(0.25 * 0.8 + 0.75 * 0.2)
    assert rerank(row, None, 0.25).final_score == 0.8  # unjudged: retrieval alone


def test_the_confirmation_uses_memory_and_context_but_never_the_gold(context: Context) -> None:
    gold = {"restaurant_name": "Sino", "city": "San Jose", "party_size": "4"}
    output = _run(context, task_goal=gold)
    assert "San Jose" in output["response"]  # recalled from the stored session
    assert "4" not in output["response"]  # only the gold knows the party size
    assert output["selected"][0].startswith("u1/s1/")
    assert all(answer.startswith("The ") for answer in output["refined"])  # answers only
    # The repair loop then asks the simulated user for what the confirmation missed.
    assert output["repair"]["initial_missing"] == ["party_size"]
    assert output["repair"]["success"] is True and output["repair"]["dte"] == 2


def test_without_refinement_the_reader_gets_questions_too(context: Context) -> None:
    output = _run(context.updated(settings={"memory": {"refine": False}}))
    assert all(text.startswith("Question: ") for text in output["refined"])
    assert output["repair"] is None  # no task goal, no repair loop


TRAIN_TRIPS = [
    MsTodSession(
        session_id=session,
        domain="Trains_1",
        intent="GetTrainTickets",
        content=[{"speaker": "user", "utterance": f"A train to {to}."}],
        task_goal={
            "to": to,
            "from": "Fresno",
            "date_of_journey": date,
            "number_of_adults": adults,
            "trip_protection": "False",
            "class": "Value",
        },
    )
    for session, to, date, adults in [
        ("t1", "Sacramento", "March 3rd", "1"),
        ("t2", "Los Angeles", "March 9th", "4"),  # the sibling trip, not meant here
    ]
]


def test_the_confirmation_states_what_the_context_says_and_the_meant_sessions_values() -> None:
    memory_bank.cache_clear()
    context = Context(
        judges={"memory_judger": "none"},
        settings={
            "memory": {
                "bank_backend": "memory",
                "bank_collection": "trains",
                "bank_source": "task_goal_oracle",  # the units below are task-goal units
            }
        },
    )
    bank = memory_bank(None, "memory", "trains")
    for session in TRAIN_TRIPS:
        bank.add_units(local_memory_units("u2", session))
    said = (
        "Hi again, it's about the get train tickets for Sacramento. "
        "Yes, I want trip insurance, leaving at quarter past 1 in the afternoon."
    )
    graph = build_memory_graph().compile(checkpointer=InMemorySaver())
    gold = {
        "to": "Sacramento",
        "from": "Fresno",
        "date_of_journey": "March 3rd",
        "number_of_adults": "1",
        "trip_protection": "True",
        "journey_start_time": "1:15 pm",
    }
    try:
        output = graph.invoke(
            {
                "individual_id": "u2",
                "intent": "GetTrainTickets",
                "context": [{"speaker": "user", "utterance": said}],
                "task_goal": gold,
            },
            {"configurable": {"thread_id": "trains"}},
            context=context,
        )
    finally:
        memory_bank.cache_clear()
    assert output["response_slots"]["trip_protection"] == "True"  # said now, memory had False
    # No stored session had a start time: the one said is confirmed under a generic name.
    assert output["response_slots"]["time"] == "1:15 pm"
    assert all(unit.split("/")[1] == "t1" for unit in output["selected"])  # not the sibling
    assert all(slot_value_mentioned(v, output["response"], slot=s) for s, v in gold.items())
    assert output["repair"]["initial_missing"] == [] and output["repair"]["dte"] == 1
