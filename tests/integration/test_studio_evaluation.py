"""The top-level ``evaluation`` graph as Studio sees it: ``langgraph dev`` via ``langgraph-sdk``.

Every graph of ``langgraph.json`` must be served with schemas the server can describe; the
evaluation graph must pause on a teacher-voting escalation three graphs deep, show the paused
subgraph states, keep its parallel sibling's finished work and resume through the server.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from dataclasses import fields
from typing import Any

import pytest
from langgraph_sdk import get_client

from tests.integration.conftest import REPO_ROOT
from tests.integration.test_langgraph_dev import DISPUTED
from todeval.evals.goal_shift_schema import Conversation, Message, TaskSpec, ToolCall
from todeval.evals.record_views import EvaluationRecord, conversation_record, dialogue_record
from todeval.evals.schema import Dialogue
from todeval.evals.subsystems import applicable_suites
from todeval.nodes.context import Context, context_from_mapping
from todeval.nodes.goal_tracking.settings import GoalTrackingSettings

pytestmark = pytest.mark.integration

#: Two local teachers (they tie on DISPUTED's turn 1), the fast local goal memory in process.
CONTEXT: dict[str, Any] = {
    "judges": {"turn_quality": ["local:signals", "local:response"], "segmentation": "local"},
    "settings": {"goal_tracking": {"vector_backend": "memory", "goal_memory_path": ":memory:"}},
}

VERDICT = {"quality": "failure", "rcof": "E1", "note": "email settings, not the VPN"}


def _graphs() -> dict[str, str]:
    graphs: dict[str, str] = json.loads((REPO_ROOT / "langgraph.json").read_text())["graphs"]
    return graphs


def _unique(record_id: str) -> str:
    """The goal memory (``:memory:``) lives as long as the shared server: ids must not repeat."""
    return f"{record_id}-{uuid.uuid4().hex[:8]}"


async def _thread(client: Any) -> str:
    thread = await client.threads.create(metadata={"test": "todeval-integration"})
    thread_id: str = thread["thread_id"]
    return thread_id


def test_context_fields_used_here_exist() -> None:
    # A misspelt field would be dropped silently by get_context and the test would run defaults.
    assert set(CONTEXT) <= {f.name for f in fields(Context)}
    context = context_from_mapping(CONTEXT)
    assert context.specs("turn_quality") == ["local:signals", "local:response"]
    assert GoalTrackingSettings.of(context).goal_memory_path == ":memory:"


def test_every_graph_is_served_with_schemas_evaluation_first(server: str) -> None:
    graphs = _graphs()
    assert next(iter(graphs)) == "evaluation"

    async def scenario() -> None:
        client: Any = get_client(url=server, api_key=None)  # SDK answers are JSON dicts
        assistants = await client.assistants.search(limit=100)
        by_graph = {a["graph_id"]: a["assistant_id"] for a in assistants}
        assert set(graphs) <= set(by_graph)
        undescribed = []
        for graph_id in graphs:
            schemas = await client.assistants.get_schemas(by_graph[graph_id])
            for kind in ("input_schema", "output_schema"):
                if not (schemas.get(kind) or {}).get("properties"):
                    undescribed.append(f"{graph_id}.{kind}")
        assert not undescribed, f"the server cannot describe: {undescribed}"

        schemas = await client.assistants.get_schemas(by_graph["evaluation"])
        assert schemas["input_schema"]["required"] == ["record"]
        assert "suites" in schemas["input_schema"]["properties"]
        output = schemas["output_schema"]
        assert {"record_id", "suites", "results"} <= set(output["properties"])
        assert {"record_id", "suites", "results"} <= set(output.get("required", []))
        roles = set((schemas.get("context_schema") or {}).get("properties", {}))
        assert {"judges", "llm", "settings"} <= roles
        assert set(CONTEXT) <= roles

    asyncio.run(scenario())


def test_escalation_pauses_the_evaluation_and_resumes_through_the_server(server: str) -> None:
    dialogue = Dialogue.model_validate(DISPUTED | {"dialog_id": _unique("studio-evaluation")})
    record = dialogue_record(dialogue).model_dump(mode="json")

    async def scenario() -> None:
        client: Any = get_client(url=server, api_key=None)  # SDK answers are JSON dicts
        thread_id = await _thread(client)
        try:
            first = await client.runs.wait(
                thread_id,
                "evaluation",
                input={"record": record, "suites": ["goal_success", "goal_tracking"]},
                context=CONTEXT,
            )
            assert isinstance(first, dict) and "__error__" not in first, first
            assert first["suites"] == ["goal_success", "goal_tracking"]

            paused = await client.threads.get_state(thread_id, subgraphs=True)
            (question,) = paused["interrupts"]
            case = question["value"]
            assert case["kind"] == "turn_quality_escalation" and case["turn_number"] == 1
            assert case["dialogue_id"] == dialogue.dialogue_id
            # An interrupt does not cancel its siblings: the goals branch ran to its end in the
            # same step and its writes were saved with the checkpoint. get_state is live, so
            # that branch has left `next` and its result is already merged into the values.
            assert paused["next"] == ["run_goal_success"]
            tasks = {task["name"]: task for task in paused["tasks"]}
            assert set(tasks) == {"run_goal_success", "run_goal_tracking"}
            tracking = tasks["run_goal_tracking"]
            assert tracking["interrupts"] == [] and tracking["error"] is None
            goals_then = tracking["result"]["results"]["goal_tracking"]
            assert goals_then["dialogue_id"] == dialogue.dialogue_id
            assert paused["values"]["results"] == {"goal_tracking": goals_then}
            # Goal tracking is one node (no subgraph to pause in): its finished result is all.
            assert tracking["state"] is None

            # The paused states, nested: evaluation -> goal_success -> teacher_voting.
            gsr = tasks["run_goal_success"]
            assert gsr["result"] is None
            assert [i["id"] for i in gsr["interrupts"]] == [question["id"]]
            goal_success = gsr["state"]
            assert goal_success["next"] == ["teacher_voting"]
            assert goal_success["values"]["segmentation"]["goals"]  # segmentation is done
            (voting_task,) = goal_success["tasks"]
            assert voting_task["name"] == "teacher_voting"
            voting = voting_task["state"]
            assert voting["next"] == ["escalate_to_human"]
            votes = voting["values"]["turns"]
            assert [v["turn_number"] for v in votes] == [1, 2, 3]
            assert votes[0]["ambiguous"] and votes[0]["quality"] is None
            assert votes[0]["decided_by"] is None
            assert [t["quality"] for t in votes[0]["teachers"]] == ["failure", "success"]
            assert [lab["judge"] for lab in voting["values"]["labels"]] == CONTEXT["judges"][
                "turn_quality"
            ]

            output = await client.runs.wait(
                thread_id, "evaluation", command={"resume": VERDICT}, context=CONTEXT
            )
            assert isinstance(output, dict) and "__error__" not in output, output
            assert output["record_id"] == dialogue.dialogue_id
            assert set(output["results"]) == {"goal_success", "goal_tracking"}
            turn = output["results"]["goal_success"]["turns"][0]
            assert (turn["quality"], turn["rcof"], turn["decided_by"]) == ("failure", "E1", "human")
            assert output["results"]["goal_success"]["human_verdicts"] == [
                {"turn_number": 1, **VERDICT, "reviewer": None}
            ]
            assert output["results"]["goal_success"]["goals"][0]["success"] is False
            # The finished sibling was not run again on resume: its saved result is reused
            # (a rerun would measure new per-utterance latencies).
            assert output["results"]["goal_tracking"] == goals_then

            final = await client.threads.get_state(thread_id, subgraphs=True)
            assert final["next"] == [] and final["interrupts"] == [] and final["tasks"] == []
            assert final["values"]["results"] == output["results"]

            history = await client.threads.get_history(thread_id, limit=50)
            assert history[0]["checkpoint"]["checkpoint_id"] == final["checkpoint"]["checkpoint_id"]
            (was_paused,) = [
                h
                for h in history
                if h["checkpoint"]["checkpoint_id"] == paused["checkpoint"]["checkpoint_id"]
            ]
            # History is the record of the step: both branches, the question asked, no merge yet.
            assert was_paused["next"] == ["run_goal_success", "run_goal_tracking"]
            assert [i["value"]["kind"] for i in was_paused["interrupts"]] == [case["kind"]]
            assert was_paused["values"]["results"] == {}
            # No join step: the resumed branch's step is the run's last.
            assert history[0]["next"] == [] and was_paused is history[1]
        finally:
            await client.threads.delete(thread_id)

    asyncio.run(scenario())


def _transcript() -> Conversation:
    """A banking transcript: a balance question answered with a tool, then a transfer."""
    return Conversation(
        dialogue_id=_unique("studio-transcript"),
        task_id="bank-1",
        task=TaskSpec(task_id="bank-1", goals=["balance", "transfer"]),
        messages=[
            Message(turn=0, role="user", content="What's the balance of my checking account?"),
            Message(
                turn=1,
                role="assistant",
                tool_calls=[
                    ToolCall(id="k1", name="get_balance", arguments={"account": "checking"})
                ],
            ),
            Message(turn=2, role="tool", tool_call_id="k1", content="120.00"),
            Message(turn=3, role="assistant", content="Your checking balance is $120.00."),
            Message(turn=4, role="user", content="Please move $20 of it to savings."),
            Message(
                turn=5,
                role="assistant",
                tool_calls=[
                    ToolCall(
                        id="k2",
                        name="transfer_funds",
                        arguments={"from": "checking", "to": "savings", "amount": 20},
                    )
                ],
            ),
            Message(turn=6, role="tool", tool_call_id="k2", content="ok"),
            Message(turn=7, role="assistant", content="Done: $20 moved to savings."),
        ],
    )


def test_an_agent_transcript_also_gets_goal_shift_metrics(server: str) -> None:
    conversation = _transcript()
    record = conversation_record(conversation)
    payload = record.model_dump(mode="json")
    expected = applicable_suites(EvaluationRecord.model_validate(payload))
    assert "goal_shift" in expected  # the record has tool calls

    async def scenario() -> None:
        client: Any = get_client(url=server, api_key=None)  # SDK answers are JSON dicts
        thread_id, direct_id = await _thread(client), await _thread(client)
        try:
            output = await client.runs.wait(
                thread_id,
                "evaluation",
                input={"record": payload},  # no suites: every one that applies
                context=CONTEXT,
            )
            assert isinstance(output, dict) and "__error__" not in output, output
            assert output["suites"] == expected
            assert set(output["results"]) == set(expected)
            shift = output["results"]["goal_shift"]
            assert shift["dialogue_id"] == conversation.dialogue_id
            assert [c["name"] for c in shift["tool_calls"]] == ["get_balance", "transfer_funds"]
            assert shift["num_tool_calls"] == 2
            # Two user messages, two turns; each turn's metadata names its tool calls.
            gsr_turns = output["results"]["goal_success"]["turns"]
            assert [t["turn_number"] for t in gsr_turns] == [1, 2]
            assert [t.metadata["tool_calls"] for t in record.dialogue.turns] == [
                ["get_balance"],
                ["transfer_funds"],
            ]

            # The branch ran the goal_shift graph the server also serves: same figures.
            direct = await client.runs.wait(
                direct_id,
                "goal_shift",
                input={"conversation": conversation.model_dump(mode="json")},
                context=CONTEXT,
            )
            assert shift == direct

            state = await client.threads.get_state(thread_id)
            assert state["next"] == [] and state["interrupts"] == []
            history = await client.threads.get_history(thread_id, limit=50)
            fan_out = {"run_goal_success", "run_goal_tracking", "run_goal_shift"}
            assert any(set(h["next"]) == fan_out for h in history)
        finally:
            await client.threads.delete(thread_id)
            await client.threads.delete(direct_id)

    asyncio.run(scenario())
