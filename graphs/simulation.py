"""Live simulation (AgentChangeBench's ``tau2 run``, LangGraph-native).

An agent under test, its tool environment and a simulated user, one checkpointed thread per
(task, trial)::

    start -> user_turn -> agent_turn -> environment_turn -> agent_turn ... -> user_turn ...
          -> grade

Every node adds a message and the graph checkpoints after each, so a conversation killed
mid-way resumes where it stopped, and Studio (``langgraph dev``) shows it message by message.
The agent (``Context.simulation_agent``) and the user (``Context.user_simulator``) are specs;
the finished thread's messages and ``reward_info`` are one entry of a tau2-compatible results
file (``todeval simulate``), which ``todeval goal-shift`` and ``todeval evaluate`` score.
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph

from todeval.nodes.context import Context
from todeval.nodes.simulation.conversation import (
    agent_turn,
    environment_turn,
    grade,
    route_after_agent,
    route_after_user,
    start,
    user_turn,
)
from todeval.nodes.simulation.state import SimulationInput, SimulationOutput, SimulationState


def build_simulation_graph() -> StateGraph[Any, Context, Any, Any]:
    """Start -> user <-> agent (<-> environment) -> grade."""
    builder = StateGraph(
        SimulationState,
        context_schema=Context,
        input_schema=SimulationInput,
        output_schema=SimulationOutput,
    )
    builder.add_node("start", start)
    builder.add_node("user_turn", user_turn)
    builder.add_node("agent_turn", agent_turn)
    builder.add_node("environment_turn", environment_turn)
    builder.add_node("grade", grade)
    builder.add_edge(START, "start")
    builder.add_edge("start", "user_turn")
    builder.add_conditional_edges("user_turn", route_after_user)
    builder.add_conditional_edges("agent_turn", route_after_agent)
    builder.add_edge("environment_turn", "agent_turn")
    builder.add_edge("grade", END)
    return builder


graph = build_simulation_graph().compile(name="simulation")
"""For ``langgraph dev`` / Studio (the server adds its own checkpointer)."""
