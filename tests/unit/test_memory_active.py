"""The memory-active graph: re-ranking, refinement, and a reader that never sees the gold."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from evals.memory_schema import MemoryUnit, MsTodSession, ScoredUnit
from graphs.memory import build_memory_graph
from nodes.context import Context
from nodes.memory.bank import memory_bank
from nodes.memory.judges.units import local_memory_units
from nodes.memory.memory_active import rerank

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
        memory_bank_backend="memory", memory_bank_collection="t", memory_judger="none"
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
    output = _run(replace(context, refine_memory=False))
    assert all(text.startswith("Question: ") for text in output["refined"])
    assert output["repair"] is None  # no task goal, no repair loop
