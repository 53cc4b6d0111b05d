"""Dialogue guidance (paper 003, Eq. 2): the agent opens and leads; a simulated user answers.

One turn is the agent's message and the user's reply. ``agent_turn`` gives the agent the
environment, the reference target and sub-targets (its system message, todeval's own) and only
the last :data:`MEMORY_TURNS` turns (the paper's memory window); ``user_turn`` answers with
ProactiveEval's user at the run's agreeableness (resistance to guidance), told which sub-targets
the message raised (none when it only reads the plan's lines out,
:func:`~nodes.proactive.text.reads_out`: plan notes put nothing to the user); ``check_target`` asks
the target-reached check (todeval's own) and stops the dialogue when the target is reached or
after :data:`~nodes.proactive.scoring.GUIDANCE_MAX_TURNS` turns. The scoring nodes follow.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from langgraph.runtime import Runtime

from todeval.evals.proactive_schema import ChatMessage, Environment, TargetPlan
from todeval.nodes.context import Context, get_context
from todeval.nodes.proactive.live_prompts import GUIDANCE_AGENT_PROMPT, OPENING_CUE
from todeval.nodes.proactive.roles import TARGET_REACHED
from todeval.nodes.proactive.scoring import GUIDANCE_MAX_TURNS
from todeval.nodes.proactive.state import GuidanceState
from todeval.nodes.proactive.text import (
    raised_sub_targets,
    reads_out,
    render_environment,
    render_plan,
)
from todeval.nodes.simulation.agents import AgentRequest, AgentUnderTest, agent_for
from todeval.nodes.simulation.settings import SimulationSettings
from todeval.nodes.simulation.users.proactive_user import (
    ProactiveUserRequest,
    proactive_user,
)

MEMORY_TURNS = 3
"""The agent sees the most recent 3 turns (the paper's memory window)."""


def memory_window(messages: Sequence[dict[str, Any]], turns: int = MEMORY_TURNS) -> list[Any]:
    """The last ``turns`` turns (agent message + user reply each); the opening cue at first."""
    if not messages:
        return [{"role": "user", "content": OPENING_CUE}]
    return [dict(m) for m in messages[-2 * turns :]]


def agent_policy(environment: Environment, reference: TargetPlan) -> str:
    """The agent's system message: E, T and S (Eq. 2)."""
    return GUIDANCE_AGENT_PROMPT.format(
        environment=render_environment(environment), plan=render_plan(reference)
    )


@functools.lru_cache(maxsize=32)
def guidance_agent(spec: str, policy: str, max_output_tokens: int | None = None) -> AgentUnderTest:
    """The agent under test for one environment (built once, not once a turn)."""
    return agent_for(spec, policy=policy, max_output_tokens=max_output_tokens)


def agent_turn(state: GuidanceState, runtime: Runtime[Context]) -> dict[str, Any]:
    """The agent's next message, from its memory window; an agent failure ends the dialogue."""
    environment = Environment.model_validate(state["environment"])
    reference = TargetPlan.model_validate(state["reference"])
    policy = agent_policy(environment, reference)
    limit = SimulationSettings.of(get_context(runtime)).agent_max_output_tokens
    agent = guidance_agent(state["agent"], policy, limit)
    messages = state.get("messages", [])
    turn = agent.respond(AgentRequest(memory_window(messages), [], state["eval_id"], state["seed"]))
    text = (turn.content or "").strip()
    if turn.error is not None or not text:
        return {"stop_reason": f"agent: {turn.error or 'empty message'}"}
    # Plan lines read out word for word put nothing to the user (the local user is puzzled).
    steps = reference.sub_target or [reference.target]
    raised = (
        [] if reads_out(steps, text) else sorted(raised_sub_targets(reference.sub_target, text))
    )
    return {"messages": [{"role": "assistant", "content": text}], "raised": [raised]}


def route_after_agent(state: GuidanceState) -> str:
    """The user answers, unless the agent gave no message."""
    return "judge_guidance" if state.get("stop_reason") else "user_turn"


def user_turn(state: GuidanceState, runtime: Runtime[Context]) -> dict[str, Any]:
    """The simulated user's reply at the run's agreeableness."""
    context = get_context(runtime)
    environment = Environment.model_validate(state["environment"])
    raised = state.get("raised", [])
    request = ProactiveUserRequest(
        user_information=environment.user_information,
        trigger_factor=environment.trigger_factor,
        agreeableness=state["agreeableness"],  # type: ignore[arg-type]
        messages=tuple(state.get("messages", [])),
        raised_now=frozenset(raised[-1] if raised else ()),
        raised=frozenset(i for found in raised for i in found),
        n_sub_targets=len(state["reference"]["sub_target"]),
        resisted=state.get("resisted", 0),
        seed=state["seed"],
    )
    reply = proactive_user(context.spec("user_simulator"), context.llm.max_retries).reply(request)
    act = {"act": reply.act, "accepted": reply.accepted, "judge": reply.judge}
    if not reply.content:
        return {"stop_reason": f"user: {reply.reason or 'no reply'}", "user_acts": [act]}
    return {
        "messages": [{"role": "user", "content": reply.content}],
        "user_acts": [act],
        "resisted": state.get("resisted", 0) + int(reply.resisted),
        "turns": state.get("turns", 0) + 1,
    }


def route_after_user(state: GuidanceState) -> str:
    """The check, unless the user gave no reply."""
    return "judge_guidance" if state.get("stop_reason") else "check_target"


def check_target(state: GuidanceState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Target reached? Stop then, or at the turn limit; else the agent goes on."""
    context = get_context(runtime)
    judge = TARGET_REACHED.judge(context.spec("target_reached"), context.llm.max_retries)
    messages = [ChatMessage.model_validate(m) for m in state.get("messages", [])]
    verdict = judge.check(TargetPlan.model_validate(state["reference"]), messages)
    update: dict[str, Any] = {"checks": [verdict.as_dict()], "reached": verdict.reached is True}
    if verdict.reached:
        update["stop_reason"] = "target reached"
    elif state.get("turns", 0) >= state.get("max_turns", GUIDANCE_MAX_TURNS):
        update["stop_reason"] = "turn limit"
    return update


def route_after_check(state: GuidanceState) -> str:
    """Score a finished dialogue; otherwise the agent's next turn."""
    return "judge_guidance" if state.get("stop_reason") else "agent_turn"
