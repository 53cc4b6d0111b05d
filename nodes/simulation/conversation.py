"""The live conversation's nodes: the agent under test, its tools, the simulated user, the grade.

    start -> user -> agent -> (tool calls?) environment -> agent ... -> user ... -> grade

Each node adds at least one message, and the graph checkpoints after every node, so a
conversation killed mid-way resumes at its last message: the agent and the user are built from
the run's specs, and the tool environment is rebuilt from the task and the tool log (it is
event-sourced, see :mod:`nodes.simulation.environments.base`).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from langgraph.runtime import Runtime
from langgraph.types import interrupt

from todeval.evals.datasets.errors import FieldError
from todeval.evals.metrics.simulation.grading import grade_conversation
from todeval.nodes.context import Context, get_context
from todeval.nodes.simulation.agents import agent_for, termination_reason
from todeval.nodes.simulation.agents.base import AgentRequest, AgentUnderTest
from todeval.nodes.simulation.agents.replay import ReplayAgent
from todeval.nodes.simulation.domains import domain_named, environment_for, gold_snapshot
from todeval.nodes.simulation.environments.base import ToolCall, ToolEnvironment, ToolResult
from todeval.nodes.simulation.environments.faults import FaultyEnvironment, ToolFaults
from todeval.nodes.simulation.settings import SimulationSettings
from todeval.nodes.simulation.state import SimulationState
from todeval.nodes.simulation.users.simulator import task_user_reply

GREETING = "Hi! How can I help you today?"
"""The agent's first message, fixed as in tau2 and AgentChangeBench (the user speaks next)."""

USER_STOP = "user_stop"
STOP_TOKEN = "###STOP###"
MAX_STEPS = "max_steps"
KEEP_GOING = "Thanks. Is there anything else you need from me for this?"
"""What the local user says instead of stopping while a replayed agent has recorded turns left."""


def start(state: SimulationState, runtime: Runtime[Context]) -> dict[str, Any]:
    """The fixed greeting; the roles the run uses."""
    context = get_context(runtime)
    return {
        "messages": [{"role": "assistant", "content": GREETING}],
        "steps": 0,
        "termination_reason": None,
        "judges": {
            "agent": SimulationSettings.of(context).agent,
            "user_simulator": context.spec("user_simulator"),
        },
    }


HUMAN = "human"
"""The ``user_simulator`` spec that lets a person play the user (in Studio, say)."""


def user_turn(state: SimulationState, runtime: Runtime[Context]) -> dict[str, Any]:
    """The simulated user answers the agent's last message (or stops).

    With ``user_simulator = "human"`` the thread pauses (``interrupt``) for a person to type
    the user's message; ``###STOP###`` in it ends the conversation, as for a simulator.
    """
    context = get_context(runtime)
    if context.spec("user_simulator") == HUMAN:
        return _human_turn(state)
    reply = task_user_reply(
        context.spec("user_simulator"),
        domain=state["domain"],
        task=state["task"],
        messages=state["messages"],
        seed=state["seed"],
        max_retries=context.llm.max_retries,
    )
    if not reply.ok:
        return {"termination_reason": "user_error", "termination_detail": reply.reason}
    if reply.stop and _replay_turns_left(state, context):
        # A recorded agent still has turns: the user stays so the recording plays out.
        reply = reply.model_copy(
            update={"utterance": KEEP_GOING, "stop": False, "stop_token": None}
        )
    note = {
        "message_index": len(state["messages"]),
        "goal_index": reply.goal_index,
        "shifted": reply.goal_shift,
        "stop": reply.stop,
    }
    update: dict[str, Any] = {
        "messages": [{"role": "user", "content": reply.content}],  # stop tokens kept, as tau2
        "user_notes": [note],
    }
    if reply.stop:
        update["termination_reason"] = USER_STOP
    return update


def _human_turn(state: SimulationState) -> dict[str, Any]:
    instructions = (state["task"].get("user_scenario") or {}).get("instructions")
    said = interrupt(
        {
            "kind": "user_turn",
            "task_id": state["task"].get("id"),
            "instructions": instructions,
            "last_agent_message": state["messages"][-1].get("content"),
            "hint": "type the user's next message; end it with ###STOP### to finish",
        }
    )
    text = str(said.get("content", "") if isinstance(said, dict) else said).strip()
    update: dict[str, Any] = {"messages": [{"role": "user", "content": text}]}
    if STOP_TOKEN in text or not text:
        update["termination_reason"] = USER_STOP
    return update


def agent_turn(state: SimulationState, runtime: Runtime[Context]) -> dict[str, Any]:
    """The agent under test speaks or calls tools; a broken turn ends the conversation."""
    context = get_context(runtime)
    environment = _environment(state, context)
    agent = _run_agent(state, context)
    turn = agent.respond(_request(state, environment.tool_schemas()))
    steps = state.get("steps", 0) + 1
    ended = termination_reason(turn)
    if ended is not None:  # tau2's reason, with the detail beside it
        return {"termination_reason": ended, "termination_detail": turn.error, "steps": steps}
    calls = [call.model_dump() for call in turn.tool_calls]
    message = {"role": "assistant", "content": turn.content, "tool_calls": calls or None}
    update: dict[str, Any] = {"messages": [message], "steps": steps}
    if steps >= SimulationSettings.of(context).max_steps:
        update["termination_reason"] = MAX_STEPS
    return update


def environment_turn(state: SimulationState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Run the agent's tool calls against the database (rebuilt from the tool log)."""
    environment = _environment(state, get_context(runtime))
    environment.replay([ToolCall.model_validate(call) for call in state.get("tool_log", [])])
    calls = [ToolCall.model_validate(call) for call in state["messages"][-1]["tool_calls"]]
    results = [environment.call(call) for call in calls]
    return {
        "messages": [_tool_message(r) for r in results],
        "tool_log": [call.model_dump() for call in calls],
    }


def _tool_message(result: ToolResult) -> dict[str, Any]:
    """A tool message as tau2 stores it; an injected fault is named (``fault``)."""
    message: dict[str, Any] = {
        "role": "tool",
        "tool_call_id": result.call_id,
        "name": result.name,
        "content": result.content,
        "error": result.error,
    }
    if result.fault:
        message["fault"] = result.fault
    return message


def grade(state: SimulationState, runtime: Runtime[Context]) -> dict[str, Any]:
    """The conversation's reward_info, as AgentChangeBench scores it (tau2-compatible).

    NL assertions are left to the goal-shift scorer that reads the results file (its judge
    is a goal-shift role); the database check runs where the task lists gold actions.
    """
    environment = _environment(state, get_context(runtime))
    environment.replay([ToolCall.model_validate(call) for call in state.get("tool_log", [])])
    try:
        reward = grade_conversation(
            state["messages"],
            state["task"],
            environment.snapshot(),
            domain=state["domain"],
            gold_snapshot=gold_snapshot(state["domain"], state["task"]),
        )
    except FieldError as error:  # a malformed turn of the agent's: graded as nothing
        return {"reward_info": None, "grade_error": str(error)}
    return {"reward_info": reward}


def route_after_user(state: SimulationState) -> Literal["agent_turn", "grade"]:
    """The agent answers unless the user stopped or failed."""
    return "grade" if state.get("termination_reason") else "agent_turn"


def route_after_agent(state: SimulationState) -> Literal["environment_turn", "user_turn", "grade"]:
    """Tool calls go to the environment, text to the user; a broken or last turn ends it."""
    if state.get("termination_reason"):
        return "grade"
    last = state["messages"][-1]
    return "environment_turn" if last.get("tool_calls") else "user_turn"


def _environment(state: SimulationState, context: Context) -> ToolEnvironment:
    """A fresh environment for the task (its database as the task starts).

    With the run's injected tool faults, drawn from the trial's seed (the same on every replay).
    """
    domain, task = state["domain"], state["task"]
    environment = environment_for(domain, task)
    faults = ToolFaults.parse(SimulationSettings.of(context).tool_faults, seed=state["seed"])
    if faults is None:
        return environment
    return FaultyEnvironment(
        environment,
        faults,
        task_id=str(task.get("id")),
        trial=state["trial"],
        fresh=lambda: environment_for(domain, task),
    )


def _replay_turns_left(state: SimulationState, context: Context) -> int:
    if not SimulationSettings.of(context).agent.startswith("replay:"):
        return 0
    agent = _run_agent(state, context)  # the agent_turn's own (cached), not a second copy
    if not isinstance(agent, ReplayAgent):
        return 0
    return agent.turns_left(_request(state, []))


def _request(state: SimulationState, tools: Sequence[Mapping[str, Any]]) -> AgentRequest:
    return AgentRequest(state["messages"], tools, str(state["task"].get("id")), state["trial"])


def _run_agent(state: SimulationState, context: Context) -> AgentUnderTest:
    settings = SimulationSettings.of(context)
    return _agent(
        settings.agent,
        domain_named(state["domain"]).policy(),
        settings.agent_max_output_tokens,
        settings.agent_fold_tool_results,
    )


@functools.lru_cache(maxsize=16)
def _agent(spec: str, policy: str, max_tokens: int | None, fold: bool) -> AgentUnderTest:
    return agent_for(spec, policy=policy, max_output_tokens=max_tokens, fold_tool_results=fold)
