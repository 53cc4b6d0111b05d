"""The top-level evaluation graph: the suites that apply run in parallel, one result per record."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from todeval.evals.goal_shift_schema import Conversation, Message, TaskSpec, ToolCall
from todeval.evals.memory_schema import MsTodEvalItem, MsTodSession
from todeval.evals.record_views import (
    MemoryItem,
    conversation_record,
    dialogue_record,
    memory_record,
)
from todeval.evals.schema import Dialogue
from todeval.graphs.evaluation import build_evaluation_graph
from todeval.nodes.context import Context
from todeval.nodes.goal_tracking.tracker import goal_memory
from todeval.nodes.memory.bank import memory_bank


@pytest.fixture
def context(tmp_path: Path) -> Iterator[Context]:
    memory_bank.cache_clear()
    yield Context(
        judges={"memory_judger": "none"},
        settings={
            "goal_success": {"escalate_ambiguous": False},
            "goal_tracking": {
                "goal_memory_path": str(tmp_path / "goals.sqlite"),
                "vector_backend": "memory",
            },
            "memory": {"bank_backend": "memory", "bank_collection": "evaluation-test"},
        },
    )
    goal_memory.cache_clear()
    memory_bank.cache_clear()


def _run(context: Context, record: Any, suites: list[str] | None = None) -> dict[str, Any]:
    graph = build_evaluation_graph().compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": record.record_id}}
    return graph.invoke(
        {"record": record.model_dump(mode="json"), "suites": suites}, config, context=context
    )


DIALOGUE = Dialogue.model_validate(
    {
        "dialog_id": "d1",
        "turns": [
            {"turn_number": 1, "user_msg": "Find me an Italian restaurant in San Jose.",
             "response": "Sino in San Jose is a good Italian place."},
            {"turn_number": 2, "user_msg": "Great, thanks!", "response": "You're welcome."},
        ],
    }
)  # fmt: skip


def _untimed(value: Any) -> Any:
    """``value`` without its measured latencies (they differ from run to run)."""
    if isinstance(value, dict):
        return {k: _untimed(v) for k, v in value.items() if k != "latency_ms"}
    if isinstance(value, list):
        return [_untimed(v) for v in value]
    return value


def test_suites_that_only_compute_run_in_one_task_with_the_same_results(context: Context) -> None:
    graph = build_evaluation_graph().compile(checkpointer=InMemorySaver())
    record = {"record": dialogue_record(DIALOGUE).model_dump(mode="json")}

    def run(run_context: Context, thread: str) -> tuple[dict[str, Any], list[tuple[str, ...]]]:
        config: Any = {"configurable": {"thread_id": thread}}
        output = graph.invoke(record, config, context=run_context)
        return output, [step.next for step in graph.get_state_history(config)]

    together, steps = run(context, "together")
    assert ("run_local_suites",) in steps
    # escalation could pause goal success: each suite gets its own branch
    apart, apart_steps = run(
        context.updated(settings={"goal_success": {"escalate_ambiguous": True}}), "apart"
    )
    assert ("run_goal_success", "run_goal_tracking") in apart_steps
    assert not any("run_local_suites" in step for step in apart_steps)
    assert _untimed(together) == _untimed(apart)
    for suite in ("goal_success", "goal_tracking"):
        assert list(together["results"][suite]) == list(apart["results"][suite])


def test_a_dialogue_gets_goal_success_and_goal_tracking(context: Context) -> None:
    output = _run(context, dialogue_record(DIALOGUE))
    assert output["record_id"] == "d1" and output["suites"] == ["goal_success", "goal_tracking"]
    assert set(output["results"]) == {"goal_success", "goal_tracking"}
    assert output["results"]["goal_success"]["dialogue_id"] == "d1"
    assert output["results"]["goal_success"]["goals"]  # at least one segmented, scored goal
    assert len(output["results"]["goal_tracking"]["turns"]) == 4  # one state per utterance


def test_a_transcript_with_tool_calls_also_gets_goal_shift_metrics(context: Context) -> None:
    conversation = Conversation(
        dialogue_id="c1",
        task_id="t1",
        task=TaskSpec(task_id="t1", goals=["balance"]),
        messages=[
            Message(turn=0, role="user", content="What's my balance?"),
            Message(
                turn=1,
                role="assistant",
                tool_calls=[ToolCall(id="k1", name="get_balance", arguments={"id": "a"})],
            ),
            Message(turn=2, role="tool", tool_call_id="k1", content="12"),
            Message(turn=3, role="assistant", content="Your balance is $12."),
        ],
    )
    output = _run(context, conversation_record(conversation))
    assert output["suites"] == ["goal_success", "goal_tracking", "goal_shift"]
    assert output["results"]["goal_shift"]["num_tool_calls"] == 1
    only = _run(context, conversation_record(conversation), suites=["goal_shift"])
    assert list(only["results"]) == ["goal_shift"]


def test_a_returning_user_gets_memory_metrics(context: Context) -> None:
    session = MsTodSession(
        session_id="s1",
        domain="Restaurants_1",
        intent="ReserveRestaurant",
        content=[{"speaker": "user", "utterance": "A table at Sino in San Jose."}],
        task_goal={"restaurant_name": "Sino", "city": "San Jose"},
    )
    item = MsTodEvalItem(
        eval_id="e1",
        intent="ReserveRestaurant",
        context=[{"speaker": "user", "utterance": "Hi again, it's about the table at Sino."}],
        task_goal={"restaurant_name": "Sino", "city": "San Jose"},
        reference_response="A table at Sino in San Jose?",
        relevant_session_ids=["s1"],
    )
    record = memory_record(MemoryItem(individual_id="u1", item=item, sessions=[session]))
    output = _run(context, record, suites=["memory"])
    memory = output["results"]["memory"]
    assert "San Jose" in memory["response"] and memory["repair"]["success"] is True
