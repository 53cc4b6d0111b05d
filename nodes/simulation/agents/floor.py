"""Floor agents (``floor:<name>``): agents under test that do nothing useful (issue 29).

A figure that tracks agent quality puts each of them at its floor (every rate at most 0.10,
every 1-10 score at most 3) and below any real agent; ``scripts/floor_agents.py`` runs them
live on every tool domain and prints where each figure stands. They need no model, no network
and no state of their own: each turn is a pure function of the conversation so far (and, for
``random_tool``, of the task id, the trial and the turn's position), so a resumed conversation
continues with the same words.

- ``floor:empty``: an empty message every turn (no text, no tool call).
- ``floor:done``: "Done! I have completed everything you asked." every turn.
- ``floor:parrot``: the user's last message, word for word.
- ``floor:transfer``: hands the user to a human: the domain's transfer tool
  (:data:`TRANSFER_TOOL`) when it is offered, then a line saying so; without the tool, the line.
- ``floor:random_tool``: a tool of the offered schemas, chosen at random, with made-up
  arguments of the schema's types (seeded by task, trial and turn); after the result, one
  neutral line naming the tool, so the user speaks again.
"""

from __future__ import annotations

import hashlib
import random
import string
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from todeval.nodes.simulation.agents.base import AgentRequest, AgentTurn, Message
from todeval.nodes.simulation.agents.loader import AgentSpecError
from todeval.nodes.simulation.environments.base import ToolCall

DONE_REPLY = "Done! I have completed everything you asked."
TRANSFER_TOOL = "transfer_to_human_agents"
"""The tau2 / AgentChangeBench name of the hand-over tool (banking and retail offer it)."""
TRANSFER_REPLY = "I am transferring you to a human agent now. Please hold on."
NO_TRANSFER_REPLY = (
    "I cannot help with this myself. Please contact a human agent, who will take it from here."
)
TOOL_DONE_REPLY = "I called {name}."
"""What ``random_tool`` says after its call's result (``name``: the tool it called)."""

Reply = Callable[[AgentRequest], AgentTurn]


class FloorAgent:
    """One floor agent, by name (see the module docstring for what each does).

    Args:
        kind: One of :data:`FLOOR_AGENTS`.

    Raises:
        AgentSpecError: An unknown name.
    """

    def __init__(self, kind: str) -> None:
        reply = FLOOR_AGENTS.get(kind)
        if reply is None:
            raise AgentSpecError(
                f"agent spec 'floor:{kind}': unknown floor agent; known: {', '.join(FLOOR_AGENTS)}"
            )
        self.name = f"floor:{kind}"
        self._reply = reply

    def respond(self, request: AgentRequest) -> AgentTurn:
        """The floor agent's next turn."""
        return self._reply(request)


def empty(request: AgentRequest) -> AgentTurn:
    """An empty message: no text, no tool call."""
    return AgentTurn(content="")


def done(request: AgentRequest) -> AgentTurn:
    """Claims success, whatever was asked."""
    return AgentTurn(content=DONE_REPLY)


def parrot(request: AgentRequest) -> AgentTurn:
    """The user's last message, word for word (empty when the user has not spoken)."""
    return AgentTurn(content=_last_said(request.messages) or "")


def transfer(request: AgentRequest) -> AgentTurn:
    """The transfer tool with the user's last words as the summary, then a line saying so."""
    messages = request.messages
    if not any(tool_name(tool) == TRANSFER_TOOL for tool in request.tools):
        return AgentTurn(content=NO_TRANSFER_REPLY)
    if _after_tool_result(messages):
        return AgentTurn(content=TRANSFER_REPLY)
    summary = _last_said(messages) or "The customer needs help."
    call = ToolCall(
        id=f"floor_{len(messages)}_0", name=TRANSFER_TOOL, arguments={"summary": summary}
    )
    return AgentTurn(tool_calls=[call])


def random_tool(request: AgentRequest) -> AgentTurn:
    """A random offered tool with made-up arguments; after its result, a neutral line."""
    messages = request.messages
    if _after_tool_result(messages):
        called = next((m for m in reversed(messages) if m.get("role") == "tool"), {})
        return AgentTurn(content=TOOL_DONE_REPLY.format(name=called.get("name") or "a tool"))
    named = [tool for tool in request.tools if tool_name(tool)]
    if not named:
        return AgentTurn(content=NO_TRANSFER_REPLY)
    rng = random.Random(_seed(request.task_id, request.trial, len(messages)))
    tool = rng.choice(named)
    function = tool.get("function", tool)
    parameters = function.get("parameters") or {}
    arguments = made_up_arguments(parameters, rng)
    call = ToolCall(id=f"floor_{len(messages)}_0", name=tool_name(tool), arguments=arguments)
    return AgentTurn(tool_calls=[call])


def tool_name(tool: Mapping[str, Any]) -> str:
    """An OpenAI function schema's name (``{"type": "function", "function": {"name"}}``)."""
    function = tool.get("function", tool)
    name = function.get("name") if isinstance(function, Mapping) else None
    return name if isinstance(name, str) else ""


def made_up_arguments(parameters: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
    """A value of the declared type for every required parameter (enums: one of theirs)."""
    properties = parameters.get("properties") or {}
    required = parameters.get("required") or list(properties)
    return {name: made_up_value(properties.get(name) or {}, rng) for name in required}


def made_up_value(schema: Mapping[str, Any], rng: random.Random) -> Any:
    """A random value of a JSON-schema type (strings: eight random letters and digits)."""
    if schema.get("enum"):
        return rng.choice(list(schema["enum"]))
    kind = schema.get("type", "string")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind == "integer":
        return rng.randint(0, 1000)
    if kind == "number":
        return round(rng.uniform(0, 1000), 2)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "array":
        return [made_up_value(schema.get("items") or {}, rng)]
    if kind == "object":
        return made_up_arguments(schema, rng) if schema.get("properties") else {}
    return "".join(rng.choices(string.ascii_lowercase + string.digits, k=8))


def _last_said(messages: Sequence[Message]) -> str:
    said = next((m for m in reversed(messages) if m.get("role") == "user"), None)
    return str((said or {}).get("content") or "")


def _after_tool_result(messages: Sequence[Message]) -> bool:
    return bool(messages) and messages[-1].get("role") == "tool"


def _seed(task_id: str, trial: int, position: int) -> int:
    digest = hashlib.sha256(f"{task_id}|{trial}|{position}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


FLOOR_AGENTS: dict[str, Reply] = {
    "empty": empty,
    "done": done,
    "parrot": parrot,
    "transfer": transfer,
    "random_tool": random_tool,
}
"""The floor agents by name: ``floor:<name>``."""
