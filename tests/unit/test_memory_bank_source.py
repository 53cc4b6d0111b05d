"""MAP's local bank is read from the stored dialogue; the task-goal bank is a named oracle.

Issue 29 item 7: a bank built from each session's task goal holds the values the gold
confirmation has. By default the local builder reads what the user and system said; the
``task_goal_oracle`` bank source keeps the task-goal units, and summaries and reports say which
bank a run read.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from todeval.evals.memory_schema import (
    Individual,
    MemoryEvalRecord,
    MsTodEvalItem,
    MsTodSession,
)
from todeval.evals.report.memory import memory_section
from todeval.graphs.corpus.memory import configuration, memory_judges
from todeval.graphs.memory import build_memory_graph
from todeval.graphs.runner import thread_id_for
from todeval.nodes.context import Context, judging_fields
from todeval.nodes.memory.bank import bank_collection, bank_for, fill_bank, memory_bank
from todeval.nodes.memory.judges.dialogue_values import (
    dialogue_slot_values,
    named_values,
    phrases,
)
from todeval.nodes.memory.settings import MemorySettings

#: The session's task goal disagrees with its dialogue on the restaurant, the city and the time.
SAID = {"restaurant_name": "Sino", "city": "San Jose", "time": "6 pm"}
STORED_GOAL = {"restaurant_name": "Oz Grill", "city": "Fremont", "time": "8 pm"}
SESSION = MsTodSession(
    session_id="s1",
    domain="Restaurants_1",
    intent="ReserveRestaurant",
    content=[
        {"speaker": "user", "utterance": "I'd like a table in San Jose at 6 pm."},
        {"speaker": "system", "utterance": "How about Sino? It has good reviews."},
        {"speaker": "user", "utterance": "Sino sounds great, book it."},
    ],
    task_goal=STORED_GOAL,
)
USER = Individual(individual_id="u1", sessions=[SESSION], eval=[])


@pytest.fixture
def context() -> Iterator[Context]:
    memory_bank.cache_clear()
    yield Context(
        judges={"memory_judger": "none"},
        settings={"memory": {"bank_backend": "memory", "bank_collection": "source"}},
    )
    memory_bank.cache_clear()


def _oracle(context: Context) -> Context:
    return context.updated(settings={"memory": {"bank_source": "task_goal_oracle"}})


def test_the_default_bank_holds_what_the_dialogue_said_not_the_task_goal(
    context: Context,
) -> None:
    assert MemorySettings().bank_source == "dialogue"
    fill_bank(context, USER)
    stored = {unit.slot: unit.value for unit in bank_for(context).units("u1")}
    assert stored == SAID
    assert not set(stored.values()) & set(STORED_GOAL.values())


def test_the_oracle_bank_holds_the_task_goal_in_its_own_collection(context: Context) -> None:
    oracle = _oracle(context)
    fill_bank(context, USER)
    fill_bank(oracle, USER)
    assert bank_collection(oracle) == "source" != bank_collection(context)
    assert {u.slot: u.value for u in bank_for(oracle).units("u1")} == STORED_GOAL
    assert {u.slot: u.value for u in bank_for(context).units("u1")} == SAID  # not read back


def test_the_confirmation_recalls_the_dialogues_values(context: Context) -> None:
    fill_bank(context, USER)
    graph = build_memory_graph().compile(checkpointer=InMemorySaver())
    output = graph.invoke(
        {
            "individual_id": "u1",
            "intent": "ReserveRestaurant",
            "context": [{"speaker": "user", "utterance": "Hi again, a table at Sino please."}],
        },
        {"configurable": {"thread_id": "t"}},
        context=context,
    )
    assert output["response_slots"] == SAID
    assert "Fremont" not in output["response"] and "8 pm" not in output["response"]


def test_summary_and_report_name_the_bank(context: Context) -> None:
    assert configuration(context, {})["bank_source"] == "dialogue"
    assert memory_judges(_oracle(context))["bank_source"] == "task_goal_oracle"
    llm = context.updated(judges={"memory_bank": "openai:gpt-4o"})
    assert memory_judges(llm)["bank_source"] == "llm"
    summary = {"items": 1, "judges": memory_judges(_oracle(context))}
    overview = dict(memory_section(summary, []).overview)
    assert overview["memory bank"] == "task goal (oracle)"
    summary = {"items": 1, "configuration": configuration(context, {})}
    assert dict(memory_section(summary, []).overview)["memory bank"] == "read from the dialogue"


def test_the_oracle_joins_the_thread_hash_and_the_default_does_not() -> None:
    default, oracle = Context(), _oracle(Context())
    item = MsTodEvalItem.model_validate(
        {
            "eval_id": "e1",
            "intent": "ReserveRestaurant",
            "context": [{"speaker": "user", "utterance": "A table at Sino again."}],
            "task_goal": SAID,
            "reference_response": "Please confirm: a table at Sino.",
            "relevant_session_ids": ["s1"],
        }
    )
    record = MemoryEvalRecord(eval_id="e1", individual_id="u1", item=item)
    # (a thread id declares every subsystem's settings, which judging_fields reads)
    assert thread_id_for("memory", record, default) != thread_id_for("memory", record, oracle)
    assert "memory.bank_source" not in judging_fields(default)
    assert judging_fields(oracle)["memory.bank_source"] == "task_goal_oracle"


def test_places_follow_their_preposition_and_names_their_slot_words() -> None:
    said = [
        "I need a flight from Chicago to Denver on March 12th.",
        "Blue Heron Air has a flight. The Larimer Lodge is a hotel near the airport.",
        "I'll take the Blue Heron Air flight.",
    ]
    found = named_values(said, ["origin_city", "destination_city", "hotel_name", "event_name"])
    assert found == {
        "origin_city": "Chicago",
        "destination_city": "Denver",
        "hotel_name": "Larimer Lodge",  # beside "hotel"
        "event_name": "Blue Heron Air",  # the one name left, the last said
    }
    # A date is no name, and a capital word opening a sentence is not one on its own.
    assert [p.text for p in phrases("Doors open on March 9th at Lakeside Hall.")] == [
        "Lakeside Hall"
    ]


def test_an_unsaid_value_is_not_stored() -> None:
    session = MsTodSession.model_validate(
        SESSION.model_dump() | {"content": [{"speaker": "user", "utterance": "Book Sino for me."}]}
    )
    assert dialogue_slot_values(session) == {"restaurant_name": "Sino"}
