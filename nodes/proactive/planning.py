"""Target planning (paper 003, Eq. 1): the agent under test plans a target and sub-targets.

``plan_target`` asks the agent (any :func:`~nodes.simulation.agents.agent_for` spec) with the
paper's own target-generation prompt (Listing 4: domain description, Table 6's example, the
environment as JSON) under todeval's system message, and reads its ``{"Target", "sub-target"}``
JSON leniently. An agent that fails or answers no readable plan leaves ``plan`` None with
``plan_error``: the judge is then skipped (no score is made up for a plan that is not there).
"""

from __future__ import annotations

import functools
from typing import Any

from langgraph.graph import END
from langgraph.runtime import Runtime

from todeval.evals.proactive_schema import Environment
from todeval.nodes.context import Context, get_context
from todeval.nodes.judges.parsing import OutputParseError, parse_json_output
from todeval.nodes.proactive.judges.synthesis_writer.llm import TargetOutput
from todeval.nodes.proactive.live_prompts import PLANNING_SYSTEM
from todeval.nodes.proactive.state import PlanningState
from todeval.nodes.proactive.text import render_environment
from todeval.nodes.prompts.proactive import (
    TARGET_EXAMPLES,
    TARGET_GENERATION_PROMPT,
    domain_description,
)
from todeval.nodes.simulation.agents import AgentRequest, AgentUnderTest, agent_for
from todeval.nodes.simulation.settings import SimulationSettings

#: The paper's sub-target count: 2-4 (Listing 4, rule 3).
SUB_TARGETS = (2, 4)


@functools.lru_cache(maxsize=8)
def planning_agent(spec: str, max_output_tokens: int | None = None) -> AgentUnderTest:
    """The agent under test, built once per spec (its system message never changes)."""
    return agent_for(spec, policy=PLANNING_SYSTEM, max_output_tokens=max_output_tokens)


def planning_prompt(domain: str, environment: Environment) -> str:
    """Listing 4 for this environment (the message the agent answers)."""
    return TARGET_GENERATION_PROMPT.format(
        description=domain_description(domain),
        example=TARGET_EXAMPLES.get(domain, TARGET_EXAMPLES["recommendation"]),
        environment=render_environment(environment),
    )


def plan_target(state: PlanningState, runtime: Runtime[Context]) -> dict[str, Any]:
    """One agent call; the plan, or None with why."""
    prompt = planning_prompt(state["domain"], Environment.model_validate(state["environment"]))
    agent = planning_agent(
        state["agent"], SimulationSettings.of(get_context(runtime)).agent_max_output_tokens
    )
    asked = [{"role": "user", "content": prompt}]
    turn = agent.respond(AgentRequest(asked, [], state["eval_id"], state["run"]))
    if turn.error is not None:
        return {"plan": None, "agent_reply": None, "plan_error": f"agent: {turn.error}"}
    reply = turn.content or ""
    try:
        plan = parse_json_output(reply, TargetOutput).plan()
    except OutputParseError as error:
        return {"plan": None, "agent_reply": reply, "plan_error": f"no readable plan: {error}"}
    low, high = SUB_TARGETS
    count = len(plan.sub_target)
    note = None if low <= count <= high else f"{count} sub-targets (the paper asks for 2-4)"
    return {"plan": plan.model_dump(), "agent_reply": reply, "plan_error": note}


def route_after_plan(state: PlanningState) -> str:
    """Judge a plan; end a run that has none."""
    return "judge_target_plan" if state.get("plan") else END
