"""tau2 / AgentChangeBench results, task files and generic JSONL transcripts as conversations."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from todeval.evals.datasets.errors import DatasetFormatError
from todeval.evals.datasets.tau2 import load_goal_shift_run, load_tau2_tasks
from todeval.evals.datasets.tau2_tools import paper_tool_schemas, tool_schemas_from_definitions
from todeval.evals.goal_shift_schema import Conversation
from todeval.evals.schema import RecordError
from todeval.stores.paths import data_dir

ACB = data_dir() / "agentchangebench"
RUN40 = ACB / "simulations" / "banking_gpt-4.1_run40.json"
needs_run40 = pytest.mark.skipif(not RUN40.exists(), reason="shared AgentChangeBench data absent")

TASK: dict[str, Any] = {
    "id": "t1",
    "user_scenario": {
        "persona": "EASY_1",
        "instructions": {"domain": "banking", "task_instructions": "..."},
        "goal_shifts": {"required_shifts": 1, "goals": ["authentication", "dispute"]},
    },
    "evaluation_criteria": {
        "action_sets": [
            {
                "action_id": "identify",
                "allowed_tools": [
                    {"function_name": "get_customer_by_phone", "params": {"phone_number": "+1"}}
                ],
            }
        ],
        "communicate_info": ["tx_101"],
        "nl_assertions": ["Agent did not transfer the customer to a human agent"],
    },
}


def call(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    return {"id": call_id, "name": name, "arguments": arguments}


def simulation(sim_id: str, messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"id": sim_id, "task_id": "t1", "trial": 0, "messages": messages, **extra}


GOOD_MESSAGES: list[dict[str, Any]] = [
    {"role": "assistant", "content": "Hi! How can I help?", "turn_idx": 0},
    {"role": "user", "content": "My phone is +1.", "turn_idx": 1},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [call("c1", "get_customer_by_phone", {"phone_number": "+1"})],
        "turn_idx": 2,
    },
    {"role": "tool", "id": "c1", "content": "{}", "error": False, "turn_idx": 3},
    {"role": "assistant", "content": '{"message": "Found tx_101."}', "turn_idx": 4},
]


def results_file(tmp_path: Path, simulations: list[Any], **info: Any) -> Path:
    path = tmp_path / "results.json"
    environment = {"domain_name": "banking", "tool_defs": None} | info
    payload = {
        "info": {"environment_info": environment},
        "tasks": [TASK],
        "simulations": simulations,
    }
    path.write_text(json.dumps(payload))
    return path


def test_results_file_becomes_conversations_with_embedded_task(tmp_path: Path) -> None:
    stored = {
        "reward": 0.5,
        "nl_assertions": [{"nl_assertion": "x", "met": True, "justification": "ok"}],
        "info": {"gsrt_v2": {"user_goal_shifts": [{"turn": 1, "from": "a", "to": "b"}]}},
    }
    run = load_goal_shift_run(
        results_file(tmp_path, [simulation("s1", GOOD_MESSAGES, reward_info=stored)])
    )
    (conversation,) = run.records
    assert isinstance(conversation, Conversation)
    assert run.domain == "banking" and run.tool_schemas is not None
    assert "Appendix C.1" in run.tools_origin
    assert conversation.persona == "EASY_1"
    assert conversation.task is not None and conversation.task.goals == [
        "authentication",
        "dispute",
    ]
    assert conversation.messages[4].content == "Found tx_101."  # the JSON wrapper is removed
    assert conversation.messages[3].tool_call_id == "c1"
    assert conversation.reward == 0.5
    assert conversation.stored.nl_assertions is not None and conversation.stored.shifts is not None
    assert conversation.stored.shifts[0].to_goal == "b"
    assert conversation.issues == []


def test_malformed_transcripts_are_reported_per_conversation(tmp_path: Path) -> None:
    broken = [
        {"role": "user", "content": "hello", "turn_idx": 0},
        {
            "role": "assistant",
            "tool_calls": [
                call("c1", "get_account", {"account_id": "a"}),  # no result follows
                call("c2", "teleport_money", {}),  # not a banking tool
                call("c3", "get_account", "{account_id: a"),  # not JSON
            ],
            "turn_idx": 1,
        },
        {"role": "tool", "id": "c2", "content": "Error: unknown tool", "error": True},
        {"role": "tool", "id": "c3", "content": "Error: bad", "error": True},
    ]
    unreadable = {"id": "s3", "task_id": "t1", "messages": [{"role": "narrator"}]}
    no_messages = {"id": "s4", "task_id": "t1"}
    run = load_goal_shift_run(
        results_file(
            tmp_path,
            [
                simulation("s1", GOOD_MESSAGES),
                simulation("s2", broken),
                unreadable,
                no_messages,
                "junk",
            ],
        )
    )
    good, bad, role_error, missing, junk = run.records
    assert isinstance(good, Conversation) and good.issues == []
    assert isinstance(bad, Conversation)  # still scored
    issues = {(i.field, i.message.split(" ")[0]) for i in bad.issues}
    assert ("messages.1.tool_calls.0", "no") in issues  # missing tool result
    assert ("messages.1.tool_calls.1.name", "unknown") in issues
    assert ("messages.1.tool_calls.2.arguments", "arguments") in issues
    assert all(i.dialogue_id == "s2" for i in bad.issues)
    assert bad.messages[1].tool_calls[2].arguments is None
    assert bad.messages[1].tool_calls[2].raw_arguments == "{account_id: a"
    assert isinstance(role_error, RecordError)
    assert (role_error.dialogue_id, role_error.field, role_error.line) == (
        "s3",
        "messages.0.role",
        3,
    )
    assert isinstance(missing, RecordError) and missing.field == "messages"
    assert missing.dialogue_id == "s4"
    assert isinstance(junk, RecordError) and junk.line == 5


def test_task_file_fills_in_missing_tasks_and_legacy_actions(tmp_path: Path) -> None:
    legacy = {
        "id": "t2",
        "user_scenario": {"persona": "HARD_1", "instructions": "plain text"},
        "evaluation_criteria": {
            "actions": [{"action_id": "a", "name": "get_account", "arguments": {"account_id": "x"}}]
        },
    }
    tasks = tmp_path / "tasks.json"
    tasks.write_text(json.dumps([legacy, {"no": "id"}]))
    specs, errors = load_tau2_tasks(tasks)
    assert specs["t2"].action_sets[0].allowed_tools[0].function_name == "get_account"
    assert specs["t2"].persona == "HARD_1"
    assert len(errors) == 1 and errors[0].line == 2
    sim = {"id": "s9", "task_id": "t2", "messages": GOOD_MESSAGES}
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"info": {}, "tasks": [], "simulations": [sim]}))
    (conversation,) = load_goal_shift_run(path, tasks_path=tasks).records
    assert isinstance(conversation, Conversation)
    assert conversation.task is not None and conversation.task.task_id == "t2"
    assert conversation.persona == "HARD_1"
    assert run_without_task_issue(path)


def run_without_task_issue(path: Path) -> bool:
    (conversation,) = load_goal_shift_run(path).records
    assert isinstance(conversation, Conversation) and conversation.task is None
    return any(i.field == "task_id" for i in conversation.issues)


def test_generic_jsonl_with_openai_tool_calls(tmp_path: Path) -> None:
    line = {
        "dialogue_id": "mine-1",
        "task": {"goals": ["orders", "returns"], "communicate_info": ["#W1"]},
        "persona": "impatient",
        "domain": "shop",
        "messages": [
            {"role": "system", "content": "you are an agent"},
            {"role": "user", "content": "where is #W1?"},
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": "x",
                        "type": "function",
                        "function": {"name": "track", "arguments": '{"order": "#W1"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "x", "content": "Error: not found"},
            {"role": "assistant", "content": "Order #W1 is late."},
        ],
    }
    path = tmp_path / "mine.jsonl.gz"
    with gzip.open(path, "wt") as handle:
        handle.write(json.dumps(line) + "\n{not json\n")
    run = load_goal_shift_run(path)
    conversation, error = run.records
    assert isinstance(conversation, Conversation) and isinstance(error, RecordError)
    assert error.line == 2 and run.tool_schemas is None  # unknown domain: no schemas
    assert conversation.persona == "impatient" and conversation.domain == "shop"
    assert [m.role for m in conversation.messages] == ["user", "assistant", "tool", "assistant"]
    assert conversation.messages[1].tool_calls[0].arguments == {"order": "#W1"}
    assert conversation.messages[2].error is True  # inferred from "Error: ..."
    assert conversation.task is not None and conversation.task.goals == ["orders", "returns"]


def test_unreadable_files_raise(tmp_path: Path) -> None:
    not_results = tmp_path / "x.json"
    not_results.write_text(json.dumps({"dialogues": []}))
    with pytest.raises(DatasetFormatError, match="simulations"):
        load_goal_shift_run(not_results)
    with pytest.raises(DatasetFormatError):
        load_goal_shift_run(tmp_path / "missing.json")


def test_tool_schemas_from_openai_definitions() -> None:
    schemas = tool_schemas_from_definitions(
        [
            {
                "type": "function",
                "function": {
                    "name": "f",
                    "parameters": {"properties": {"a": {"type": "string"}}, "required": ["a"]},
                },
            }
        ]
    )
    assert schemas["f"].required == ["a"] and schemas["f"].properties["a"] == {"type": "string"}
    banking = paper_tool_schemas("banking")
    assert banking is not None and banking["get_transactions"].required == ["account_id"]
    assert "limit" in banking["get_transactions"].properties
    assert paper_tool_schemas("telecom") is None


@needs_run40
def test_run40_prefers_embedded_tasks_and_names_personas() -> None:
    raw = json.loads(RUN40.read_text())
    embedded = {t["id"]: t for t in raw["tasks"]}
    run = load_goal_shift_run(RUN40, tasks_path=ACB / "domains" / "banking" / "tasks.json")
    conversations = [r for r in run.records if isinstance(r, Conversation)]
    assert len(conversations) == 40 and run.task_errors == []
    for conversation in conversations:
        assert conversation.task is not None
        expected = embedded[conversation.task_id]["evaluation_criteria"]["action_sets"]
        got = [a.model_dump() for a in conversation.task.action_sets]
        assert [(a["action_id"], a["allowed_tools"]) for a in expected] == [
            (a["action_id"], a["allowed_tools"]) for a in got
        ]
    # The task file is a later revision: task 14 asks for one string less there.
    by_task = {c.task_id: c for c in conversations}
    task14 = by_task["14_banking_transactions_medium2_dispute_001_converted"].task
    assert task14 is not None
    assert task14.communicate_info == ["$89.99", "DISP-2025-08-23-003"]
    # Embedded personas are full texts; the task file names them.
    assert {c.persona for c in conversations} == {
        "EASY_1",
        "EASY_2",
        "MEDIUM_1",
        "MEDIUM_2",
        "HARD_1",
    }
    assert all(c.issues == [] for c in conversations)
