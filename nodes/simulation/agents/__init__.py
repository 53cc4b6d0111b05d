"""Agents under test, chosen by spec string the way judges are (:func:`agent_for`).

Specs: ``<provider>:<model>[@<base_url>]`` (a chat model with tool calling,
:mod:`~nodes.simulation.agents.chat_model`); ``graph:<package.module>:<attribute>`` or a bare
``package.module:attribute`` / ``file.py:attribute`` (an in-process LangGraph graph);
``langgraph:<assistant_id>@<url>`` (an assistant on a LangGraph server);
``python:<package.module>:<function>`` (a plain callable); ``replay:<path>`` (the agent turns
of a tau2 results file); ``floor:<name>`` (an agent that does nothing useful: the floor a
figure must put below any real agent, issue 29).

Every agent answers ``respond(AgentRequest(messages, tools, task_id, trial))`` with an
:class:`AgentTurn` and never raises: an agent that raises or answers malformed tool calls gives
a turn whose ``error`` starts with the tau2 termination reason (:func:`termination_reason`). A
bad *spec* raises :class:`AgentSpecError` (or a judge spec error) when the agent is built.
"""

from __future__ import annotations

from todeval.nodes.judges.spec import PROVIDERS
from todeval.nodes.simulation.agents.base import (
    AgentRequest,
    AgentTurn,
    AgentUnderTest,
    Message,
)
from todeval.nodes.simulation.agents.loader import AgentSpecError
from todeval.nodes.simulation.agents.turns import (
    AGENT_ERROR,
    AGENT_STOP,
    failed_turn,
    termination_reason,
)

__all__ = [
    "AGENT_ERROR",
    "AGENT_STOP",
    "AgentRequest",
    "AgentSpecError",
    "AgentTurn",
    "AgentUnderTest",
    "Message",
    "agent_for",
    "failed_turn",
    "termination_reason",
]

AGENT_SPEC_SYNTAX = (
    "'<provider>:<model>[@<base_url>]', 'graph:<package.module>:<attribute>', "
    "'langgraph:<assistant_id>@<url>', 'python:<package.module>:<function>', 'replay:<path>' "
    "or 'floor:<name>'"
)


def agent_for(
    spec: str,
    *,
    policy: str,
    max_output_tokens: int | None = None,
    fold_tool_results: bool = False,
) -> AgentUnderTest:
    """The agent ``spec`` names, told the domain ``policy`` (its system prompt).

    ``max_output_tokens`` and ``fold_tool_results`` (tool results as user messages, for chat
    templates that drop tool messages) apply to chat models only.

    Raises:
        AgentSpecError: The spec is empty, of no known kind, or names no usable agent.
        JudgeSpecError: A chat-model spec names an unknown provider.
        JudgeConfigError: A chat model cannot be built here (package or API key missing).
    """
    raw = spec.strip() if isinstance(spec, str) else ""
    kind, sep, rest = raw.partition(":")
    if not raw or not sep or not rest.strip():
        raise AgentSpecError(f"agent spec {spec!r} is not one of {AGENT_SPEC_SYNTAX}")
    # Adapters are imported on demand: a replay run needs neither langgraph-sdk nor a provider.
    if kind == "replay":
        from todeval.nodes.simulation.agents.replay import ReplayAgent

        return ReplayAgent(rest.strip())
    if kind == "floor":
        from todeval.nodes.simulation.agents.floor import FloorAgent

        return FloorAgent(rest.strip())
    if kind == "python":
        from todeval.nodes.simulation.agents.callable import CallableAgent

        return CallableAgent(rest.strip(), policy=policy)
    if kind == "langgraph":
        from todeval.nodes.simulation.agents.remote import RemoteAgent

        return RemoteAgent(rest.strip(), policy=policy)
    if kind == "graph" or "." in kind or kind.endswith(".py"):
        from todeval.nodes.simulation.agents.graph import GraphAgent

        return GraphAgent(rest.strip() if kind == "graph" else raw, policy=policy)
    if kind.lower() in PROVIDERS:
        from todeval.nodes.simulation.agents.chat_model import ChatModelAgent

        return ChatModelAgent(
            raw,
            policy=policy,
            max_output_tokens=max_output_tokens,
            fold_tool_results=fold_tool_results,
        )
    raise AgentSpecError(
        f"agent spec {spec!r}: unknown kind {kind!r}; expected {AGENT_SPEC_SYNTAX} "
        f"(known providers: {', '.join(sorted(PROVIDERS))})"
    )
