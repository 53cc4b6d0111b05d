"""Live simulation's settings: the agent under test and the conversation's length.

Read with ``SimulationSettings.of(context)``. The simulated user is a judge role
(``user_simulator``, in ``Context.judges``); the agent is not a judge but the system evaluated.
"""

from __future__ import annotations

from pydantic import Field

from todeval.nodes.context import SubsystemSettings


class SimulationSettings(SubsystemSettings, section="simulation"):
    """The agent under test in live simulations and how long a conversation runs."""

    agent: str = Field(
        "",
        description="The agent under test (todeval simulate --agent): a chat model spec, "
        "replay:PATH, or a graph or callable by import path (nodes.simulation.agents).",
    )
    agent_max_output_tokens: int | None = Field(
        None, description="A chat-model agent's longest answer (None: the provider's default)."
    )
    agent_fold_tool_results: bool = Field(
        False,
        description="Send tool results to a chat-model agent as user messages (for servers whose "
        "chat template drops tool messages).",
    )
    max_steps: int = Field(
        200,
        gt=0,
        description="Agent turns after which a simulated conversation ends with max_steps "
        "(tau2's default).",
    )
    tool_faults: str = Field(
        "",
        description="Faults injected into the agent's tool calls, RATE[:KIND,...] (kinds: "
        "timeout, error, empty, corrupted, stale; e.g. 0.2 or 0.1:timeout,error), drawn "
        "reproducibly from the trial's seed; empty: none (nodes.simulation.environments.faults).",
    )
