"""The graphs of ``langgraph.json`` served by ``langgraph dev``, used through ``langgraph-sdk``."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langgraph_sdk import get_client

pytestmark = pytest.mark.integration

#: Two local teachers split on turn 1: the user complains (signals: failure) about an answer
#: that shows no failure sign by itself (response: success), so the vote ties and escalates.
DISPUTED: dict[str, Any] = {
    "dialog_id": "studio-escalation",
    "turns": [
        {
            "turn_number": 1,
            "user_msg": "How do I reset my VPN password?",
            "response": "Open the self-service portal, choose Email settings and pick a new "
            "mailbox password.",
            "source_names": ["Mailbox help"],
            "source_snippets": ["Choose Email settings in the self-service portal."],
        },
        {
            "turn_number": 2,
            "user_msg": "that's not what i asked, i need the VPN password reset",
            "response": "Sorry about that. In the self-service portal choose VPN, then Reset "
            "password.",
            "source_names": ["VPN help"],
            "source_snippets": ["In the self-service portal choose VPN, then Reset password."],
        },
        {
            "turn_number": 3,
            "user_msg": "thanks, that worked",
            "response": "Glad it worked! Anything else I can help with?",
        },
    ],
}


def test_goal_success_is_listed_first_with_its_schemas(server: str) -> None:
    async def scenario() -> None:
        client = get_client(url=server, api_key=None)
        everything = await client.assistants.search(limit=100)
        graph_ids = {a["graph_id"] for a in everything}
        assert {"goal_success", "teacher_voting", "goal_segmentation"} <= graph_ids
        (assistant,) = await client.assistants.search(graph_id="goal_success", limit=10)
        schemas = await client.assistants.get_schemas(assistant["assistant_id"])
        assert schemas["input_schema"]["required"] == ["dialogue"]
        assert {"goals", "turns", "segmentation"} <= set(schemas["output_schema"]["properties"])
        assert "judges" in (schemas.get("context_schema") or {}).get("properties", {})

    asyncio.run(scenario())


def test_escalation_pauses_and_resumes_through_the_server(server: str) -> None:
    context = {
        "judges": {"turn_quality": ["local:signals", "local:response"], "segmentation": "local"}
    }

    async def scenario() -> None:
        client = get_client(url=server, api_key=None)
        thread = await client.threads.create(metadata={"test": "todeval-integration"})
        thread_id = thread["thread_id"]
        try:
            await client.runs.wait(
                thread_id, "goal_success", input={"dialogue": DISPUTED}, context=context
            )
            paused = await client.threads.get_state(thread_id, subgraphs=True)
            assert paused["next"] == ["teacher_voting"]
            (question,) = paused["interrupts"]
            case = question["value"]
            assert case["kind"] == "turn_quality_escalation" and case["turn_number"] == 1
            assert [t["quality"] for t in case["teachers"]] == ["failure", "success"]
            # The paused subgraph's state is visible: the votes so far.
            (task,) = [t for t in paused["tasks"] if t["name"] == "teacher_voting"]
            votes = task["state"]["values"]["turns"]
            assert votes[0]["ambiguous"] and votes[0]["quality"] is None

            output = await client.runs.wait(
                thread_id,
                "goal_success",
                command={"resume": {"quality": "failure", "rcof": "E1", "note": "email, not VPN"}},
                context=context,
            )
            assert isinstance(output, dict) and "__error__" not in output, output
            first = output["turns"][0]
            assert (first["quality"], first["rcof"], first["decided_by"]) == (
                "failure",
                "E1",
                "human",
            )
            (goal,) = output["goals"]  # the complaint continues the goal it complains about
            assert goal["success"] is False and goal["rcof"] == "E1"
            final = await client.threads.get_state(thread_id)
            assert final["next"] == [] and final["interrupts"] == []
            history = await client.threads.get_history(thread_id, limit=50)
            assert any(snapshot["next"] == ["teacher_voting"] for snapshot in history)
        finally:
            await client.threads.delete(thread_id)

    asyncio.run(scenario())


def test_server_lists_goal_segmentation_with_its_schemas(server: str) -> None:
    async def scenario() -> None:
        client = get_client(url=server, api_key=None)
        assistants = await client.assistants.search(graph_id="goal_segmentation", limit=100)
        assert [a["graph_id"] for a in assistants] == ["goal_segmentation"]
        everything = await client.assistants.search(limit=100)
        assert "goal_segmentation" in {a["graph_id"] for a in everything}

        schemas = await client.assistants.get_schemas(assistants[0]["assistant_id"])
        input_schema, output_schema = schemas["input_schema"], schemas["output_schema"]
        assert input_schema is not None and output_schema is not None
        assert "dialogue" in input_schema["properties"]
        assert input_schema.get("required") == ["dialogue"]
        assert {"dialogue_id", "turns", "goals", "judge"} <= set(output_schema["properties"])
        context_schema = schemas.get("context_schema") or {}
        assert {"judges", "llm", "settings"} <= set(context_schema.get("properties", {}))

    asyncio.run(scenario())


def test_run_on_a_thread_segments_and_checkpoints(server: str, dialogue: dict[str, Any]) -> None:
    n_turns = len(dialogue["turns"])

    async def scenario() -> None:
        client = get_client(url=server, api_key=None)
        thread = await client.threads.create(metadata={"test": "todeval-integration"})
        thread_id = thread["thread_id"]
        try:
            output = await client.runs.wait(
                thread_id,
                "goal_segmentation",
                input={"dialogue": dialogue},
                context={"judges": {"segmentation": "local:rules"}},
            )
            assert isinstance(output, dict), output
            assert "__error__" not in output, output
            assert output["dialogue_id"] == dialogue["dialog_id"]
            assert output["judge"].startswith("local:rules")
            labels = [turn["is_new_goal"] for turn in output["turns"]]
            assert [turn["turn_number"] for turn in output["turns"]] == list(range(1, n_turns + 1))
            assert labels[0] is True
            _assert_spans_partition(output["goals"], labels, n_turns)

            state = await client.threads.get_state(thread_id)
            assert state["next"] == []
            assert state["values"]["goals"] == output["goals"]
            assert state["values"]["turns"] == output["turns"]
            assert state["values"]["dialogue"]["dialog_id"] == dialogue["dialog_id"]

            history = await client.threads.get_history(thread_id, limit=50)
            assert len(history) >= 2
            # Newest first: the final checkpoint, and before it one that still had work to do.
            assert history[0]["checkpoint"]["checkpoint_id"] == state["checkpoint"]["checkpoint_id"]
            pending = [snapshot["next"] for snapshot in history[1:]]
            assert ["build_goal_spans"] in pending
            assert ["segment_goals"] in pending
        finally:
            await client.threads.delete(thread_id)

    asyncio.run(scenario())


def _assert_spans_partition(goals: list[dict[str, Any]], labels: list[bool], n_turns: int) -> None:
    """Goal spans are contiguous, start where a label says "new goal" and cover every turn."""
    assert [goal["goal_index"] for goal in goals] == list(range(len(goals)))
    covered = []
    for goal in goals:
        assert goal["start_turn"] <= goal["end_turn"]
        assert labels[goal["start_turn"] - 1] is True
        covered.extend(range(goal["start_turn"], goal["end_turn"] + 1))
    assert covered == list(range(1, n_turns + 1))
    assert len(goals) == sum(bool(label) for label in labels)


def test_goal_tracker_runs_online_one_utterance_per_call(server: str) -> None:
    context = {
        "settings": {"goal_tracking": {"vector_backend": "memory", "goal_memory_path": ":memory:"}}
    }
    said = [
        ("USER", "I need a hotel in Chicago for two nights."),
        ("SYSTEM", "Please confirm: a hotel in Chicago for two nights?"),
        ("USER", "Actually never mind, forget it."),
    ]

    async def scenario() -> None:
        client = get_client(url=server, api_key=None)
        thread = await client.threads.create(metadata={"test": "todeval-integration"})
        thread_id = thread["thread_id"]
        try:
            states = []
            for index, (speaker, text) in enumerate(said):
                output = await client.runs.wait(
                    thread_id,
                    "goal_tracking",
                    input={
                        "dialogue_id": "online-1",
                        "utterances": [{"speaker": speaker, "text": text}],
                        "final": index == len(said) - 1,
                    },
                    context=context,
                )
                assert isinstance(output, dict) and "__error__" not in output, output
                states.append(output["turns"][-1]["goal_states"])
            assert len(output["turns"]) == len(said)  # the thread kept the earlier utterances
            assert states[0] == {"g1": "open"}
            assert states[1] == {"g1": "pending"}
            assert states[2] == {"g1": "abandoned"}
        finally:
            await client.threads.delete(thread_id)

    asyncio.run(scenario())
