"""The agent under test, whatever it is: one interface, OpenAI-style messages in and out.

A message is a dict as tau2 results files store them (``role``, ``content``, ``tool_calls``
``[{id, name, arguments}]``, ``tool_call_id``, ``error``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import BaseModel, Field

from todeval.nodes.simulation.environments.base import ToolCall

Message = Mapping[str, Any]


class AgentTurn(BaseModel):
    """The agent's next message: text, tool calls, or why there is none."""

    content: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    error: str | None = Field(
        default=None,
        description="Why the agent produced no usable turn (it raised, returned malformed tool "
        "calls, ...); the conversation then ends with this as its termination reason.",
    )


@dataclass(frozen=True)
class AgentRequest:
    """What an agent is asked for one turn: the conversation so far and the tools it may call.

    ``task_id`` and ``trial`` name the conversation (a replay looks its turns up by them, a
    chat model seeds its call with the trial, a graph finds them in its ``configurable``).
    """

    messages: Sequence[Message]
    tools: Sequence[Mapping[str, Any]]
    task_id: str
    trial: int

    def configurable(self) -> dict[str, Any]:
        """What a LangGraph agent finds in ``config["configurable"]``: tools, task id, trial."""
        return {
            "tools": [dict(t) for t in self.tools],
            "task_id": self.task_id,
            "trial": self.trial,
        }


class AgentUnderTest(Protocol):
    """An agent adapter (see :mod:`nodes.simulation.agents`)."""

    name: str

    def respond(self, request: AgentRequest) -> AgentTurn:
        """The next turn given the conversation so far."""
        ...
