"""A LangGraph graph as the agent under test (``graph:package.module:graph``).

Invoked once per agent turn with ``{"messages": [...]}`` (the policy as a ``SystemMessage``,
then the conversation); tools, task id and trial are in ``config["configurable"]``. The graph
must *not* run the tools: the harness runs them against the trial's database. Its turn is
the last AI message it added.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import StateGraph

from todeval.nodes.simulation.agents.base import AgentRequest, AgentTurn
from todeval.nodes.simulation.agents.loader import AgentSpecError, import_object
from todeval.nodes.simulation.agents.messages import to_langchain
from todeval.nodes.simulation.agents.turns import (
    MalformedTurn,
    guarded,
    turn_from_ai_message,
    turn_from_reply,
)


class GraphAgent:
    """An in-process LangGraph graph (a ``StateGraph`` is compiled); ``graph`` overrides it."""

    def __init__(self, target: str, *, policy: str, graph: Any = None) -> None:
        self.name = f"graph:{target}"
        found = graph if graph is not None else import_object(target, spec=self.name)
        if isinstance(found, StateGraph):
            found = found.compile()
        if not callable(getattr(found, "invoke", None)):
            raise AgentSpecError(
                f"agent spec {self.name!r}: {type(found).__name__} is not a LangGraph graph"
            )
        self.graph = found
        self.policy = policy

    def respond(self, request: AgentRequest) -> AgentTurn:
        """Invoke the graph on the conversation; its last new AI message is the turn."""

        def produce() -> AgentTurn:
            sent = to_langchain(request.messages, system=self.policy)
            config: RunnableConfig = {
                "configurable": request.configurable(),
                "run_name": self.name,
            }
            result = self.graph.invoke({"messages": sent}, config=config)
            reply = last_ai_message(result, sent_count=len(sent))
            if isinstance(reply, AIMessage):
                return turn_from_ai_message(reply, position=len(request.messages))
            return turn_from_reply(reply, position=len(request.messages))

        return guarded(self.name, produce)


def last_ai_message(result: Any, *, sent_count: int) -> Any:
    """The last AI message a graph run added to ``messages``.

    With ``add_messages`` the output repeats the input first, so only what follows the
    ``sent_count`` input messages is new. Raises :class:`MalformedTurn` if there is none.
    """
    found = result.get("messages") if isinstance(result, Mapping) else None
    if not isinstance(found, Sequence) or isinstance(found, str):
        raise MalformedTurn("the graph's output has no 'messages' list")
    added = found[sent_count:] if len(found) >= sent_count else found
    for message in reversed(added):
        if isinstance(message, AIMessage) or (
            isinstance(message, Mapping) and message.get("type", message.get("role")) in _AI
        ):
            return message
    raise MalformedTurn("the graph added no AI message")


_AI = frozenset({"ai", "assistant", "AIMessageChunk"})
