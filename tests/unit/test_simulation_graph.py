"""The live simulation graph and ``todeval simulate``: results files, resume, bad agents, blame."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command

from todeval.cli.main import main
from todeval.evals.datasets.tau2 import load_goal_shift_run
from todeval.evals.metrics.simulation.attribution import attribute, attribute_failures
from todeval.graphs.simulation import build_simulation_graph
from todeval.nodes.context import Context
from todeval.nodes.simulation.agents import AgentTurn
from todeval.nodes.simulation.environments.base import ToolCall
from todeval.stores.paths import data_dir

RUN40 = data_dir() / "agentchangebench" / "simulations" / "banking_gpt-4.1_run40.json"
TASKS = json.loads((data_dir() / "agentchangebench/domains/banking/tasks.json").read_text())
TASK = TASKS[0]
REPLAY = f"replay:{RUN40}"


class Killed(BaseException):
    """The process dying mid-conversation (not an error the graph may catch)."""


STEPS: dict[str, int] = {"n": 0, "kill_at": 10**6}


def scripted_agent(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AgentTurn:
    """Looks the customer up once, then answers; dies at ``STEPS["kill_at"]`` (a kill -9)."""
    STEPS["n"] += 1
    if STEPS["n"] == STEPS["kill_at"]:
        raise Killed
    if not any(m.get("role") == "tool" for m in messages):
        call = ToolCall(id="c1", name="get_customer_by_phone",
                        arguments={"phone_number": "+15551234567"})  # fmt: skip
        return AgentTurn(content="", tool_calls=[call])
    return AgentTurn(content=f"Done with step {STEPS['n']}. Anything else?")


def broken_agent(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AgentTurn:
    raise RuntimeError("the agent under test crashed")


def _context(agent: str) -> Context:
    return Context(
        judges={"user_simulator": "local"},
        settings={"simulation": {"agent": agent, "max_steps": 12}},
    )


def _invoke(saver: SqliteSaver, agent: str, thread: str) -> dict[str, Any]:
    graph = build_simulation_graph().compile(checkpointer=saver)
    config: Any = {"configurable": {"thread_id": thread}}
    inputs = {"domain": "banking", "task": TASK, "trial": 0, "seed": 300}
    state = graph.get_state(config)
    return dict(graph.invoke(None if state.next else inputs, config, context=_context(agent)))


def test_a_conversation_killed_mid_way_resumes_to_the_same_transcript(tmp_path: Path) -> None:
    agent = "python:tests.unit.test_simulation_graph:scripted_agent"
    with SqliteSaver.from_conn_string(str(tmp_path / "a.sqlite")) as saver:
        STEPS.update(n=0, kill_at=10**6)
        whole = _invoke(saver, agent, "whole")
    with SqliteSaver.from_conn_string(str(tmp_path / "b.sqlite")) as saver:
        STEPS.update(n=0, kill_at=3)
        with pytest.raises(Killed):
            _invoke(saver, agent, "killed")
        STEPS.update(kill_at=10**6)
        STEPS["n"] = 2  # the agent's own counter, as a fresh process would not keep it
        resumed = _invoke(saver, agent, "killed")
    assert [m["role"] for m in resumed["messages"]] == [m["role"] for m in whole["messages"]]
    assert resumed["messages"] == whole["messages"]
    assert (
        resumed["tool_log"]
        == whole["tool_log"]
        == [
            {
                "id": "c1",
                "name": "get_customer_by_phone",
                "arguments": {"phone_number": "+15551234567"},
            }
        ]
    )
    tool = next(m for m in whole["messages"] if m["role"] == "tool")
    assert "cust_101" in tool["content"] and not tool["error"]  # ran against the database


def test_a_crashing_agent_ends_its_conversation_with_the_reason(tmp_path: Path) -> None:
    with SqliteSaver.from_conn_string(str(tmp_path / "c.sqlite")) as saver:
        out = _invoke(saver, "python:tests.unit.test_simulation_graph:broken_agent", "broken")
    assert out["termination_reason"] == "agent_error"
    assert out["reward_info"] is not None and out["reward_info"]["reward"] == 0.0


def test_simulate_writes_a_results_file_goal_shift_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = [TASKS[0]["id"], TASKS[3]["id"]]
    out = tmp_path / "run"
    # A replay holds one trial per task (asking it for two is a usage error): a floor agent.
    args = ["simulate", "--domain", "banking", "--agent", "floor:parrot", "--trials", "2",
            "--tasks", ",".join([*ids, "no-such-task"]), "--out", str(out),
            "--checkpoints", str(tmp_path / "sim.sqlite")]  # fmt: skip
    assert main(args) == 0
    line = capsys.readouterr().out
    assert "simulated 4 conversations" in line and "1 skipped" in line
    results = json.loads((out / "results.json").read_text())
    assert [s["id"] for s in results["simulations"]] == [f"{i}#{t}" for i in ids for t in (0, 1)]
    run = load_goal_shift_run(out / "results.json")  # the goal-shift loader reads it unchanged
    assert len(run.records) == 4 and not run.task_errors
    # The tools the agent had travel with the file, so any reader checks calls against them.
    assert (
        run.domain == "banking" and run.tools_origin == "results file (environment_info.tool_defs)"
    )
    assert run.tool_schemas is not None and "check_payment_request" in run.tool_schemas
    summary = json.loads((out / "summary.json").read_text())
    assert "1" in summary["pass_hat_k"] and "2" in summary["pass_hat_k"]
    causes = summary["simulation"]["attribution"]["counts"]
    assert sum(causes.values()) == sum(
        1 for s in results["simulations"] if s["reward_info"]["reward"] < 1
    )
    # Same seed, same deterministic agent: the same transcripts (trial by trial).
    again = tmp_path / "again"
    assert main([*args[:-4], "--out", str(again), "--checkpoints", ":memory:"]) == 0
    second = json.loads((again / "results.json").read_text())
    assert [s["messages"] for s in second["simulations"]] == [
        s["messages"] for s in results["simulations"]
    ]


def test_unknown_domain_is_a_usage_error(tmp_path: Path) -> None:
    code = main(["simulate", "--domain", "telecom", "--agent", REPLAY, "--out", str(tmp_path)])
    assert code == 2


# -- failure attribution ----------------------------------------------------------------------


def _simulation(messages: list[dict[str, Any]], reason: str = "user_stop",
                notes: list[dict[str, Any]] | None = None) -> dict[str, Any]:  # fmt: skip
    return {
        "id": "x#0",
        "task_id": TASK["id"],
        "messages": messages,
        "termination_reason": reason,
        "reward_info": {"reward": 0.0, "action_checks": []},
        "todeval": {"user_notes": notes or []},
    }


def test_a_tool_that_fails_by_itself_is_the_environments_fault() -> None:
    messages = [{"role": "assistant", "content": "hi"},
                {"role": "tool", "name": "get_account", "content": "boom", "error": True,
                 "error_kind": "environment"}]  # fmt: skip
    assert attribute(TASK, _simulation(messages))["cause"] == "environment"
    wrong_call = [{**messages[1], "error_kind": "call"}]
    assert attribute(TASK, _simulation(wrong_call))["cause"] == "agent"


def test_a_user_who_contradicts_the_task_or_stops_early_is_the_simulators_fault() -> None:
    wrong_phone = [{"role": "user", "content": "My phone number is +15559990000."}]
    blamed = attribute(TASK, _simulation(wrong_phone))
    assert blamed["cause"] == "user_simulator" and blamed["message_index"] == 0
    right_phone = [{"role": "user", "content": "My phone number is +15551234567."}]
    assert attribute(TASK, _simulation(right_phone))["cause"] == "agent"
    early = [{"message_index": 0, "goal_index": 0, "shifted": False, "stop": True}]
    stopped = attribute(TASK, _simulation(right_phone, notes=early))
    assert stopped["cause"] == "user_simulator" and "stopped on goal 1 of 3" in stopped["evidence"]
    counted = attribute_failures([TASK], [_simulation(wrong_phone), _simulation(right_phone)])
    assert counted["counts"] == {"user_simulator": 1, "agent": 1}


def test_an_agent_as_a_langsmith_experiment_offline(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LANGSMITH_API_KEY", raising=False)
    args = ["experiment", "--simulate", "--domain", "banking", "--agent", REPLAY,
            "--tasks", str(TASK["id"]), "--trials", "2"]  # fmt: skip
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "experiment over 2 records: offline, not uploaded" in printed
    assert "TSR" in printed
    assert main(["experiment", "--simulate", "--domain", "banking"]) == 2  # no agent


def test_a_person_can_play_the_user() -> None:
    graph = build_simulation_graph().compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "human"}}
    context = Context(
        judges={"user_simulator": "human"},
        settings={"simulation": {"agent": REPLAY, "max_steps": 12}},
    )
    inputs = {"domain": "banking", "task": TASK, "trial": 0, "seed": 300}
    paused = graph.invoke(inputs, config, context=context)
    (question,) = paused["__interrupt__"]
    assert question.value["kind"] == "user_turn" and question.value["task_id"] == TASK["id"]
    again = graph.invoke(Command(resume="I can't log in."), config, context=context)
    assert "__interrupt__" in again  # the agent answered; the person's turn again
    done = graph.invoke(Command(resume="Thanks. ###STOP###"), config, context=context)
    users = [m["content"] for m in done["messages"] if m["role"] == "user"]
    assert users == ["I can't log in.", "Thanks. ###STOP###"]
    assert done["termination_reason"] == "user_stop" and done["reward_info"] is not None
