"""An assistant on a LangGraph server as the agent under test (``langgraph:<assistant>@<url>``).

One stateless ``runs.wait`` per agent turn through langgraph-sdk, with the same input and
configurable as an in-process graph (:mod:`nodes.simulation.agents.graph`). The key comes from
``LANGGRAPH_API_KEY`` or ``LANGSMITH_API_KEY``; calls go through the endpoint's agent gate
(:meth:`~nodes.judges.limits.LLMLimits.agent_gate`: as many in flight as conversations) and time
out after the run's ``llm_timeout_s``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from todeval.nodes.judges.limits import LIMITS, CallRefused
from todeval.nodes.simulation.agents.base import AgentRequest, AgentTurn
from todeval.nodes.simulation.agents.graph import last_ai_message
from todeval.nodes.simulation.agents.loader import AgentSpecError
from todeval.nodes.simulation.agents.messages import to_json_messages
from todeval.nodes.simulation.agents.turns import failed_turn, guarded, turn_from_reply

_TARGET = re.compile(r"^(?P<assistant>[^@\s]+)@(?P<url>https?://\S+)$")


class RemoteAgent:
    """An assistant on a LangGraph server (``target``: ``<assistant_id>@http(s)://...``)."""

    def __init__(self, target: str, *, policy: str, client: Any = None) -> None:
        self.name = f"langgraph:{target}"
        match = _TARGET.match(target.strip())
        if match is None:
            raise AgentSpecError(
                f"agent spec {self.name!r}: expected 'langgraph:<assistant_id>@<url>', e.g. "
                "'langgraph:agent@http://127.0.0.1:2024'"
            )
        self.assistant_id, self.url = match["assistant"], match["url"].rstrip("/")
        self.policy = policy
        if client is None:
            from langgraph_sdk import get_sync_client  # the SDK is needed only for this spec

            client = get_sync_client(url=self.url, timeout=LIMITS.policy.timeout_s)
        self.client = client

    def respond(self, request: AgentRequest) -> AgentTurn:
        """One stateless run on the server; its last new AI message is the turn."""

        def produce() -> AgentTurn:
            sent = to_json_messages(request.messages, system=self.policy)
            gate = LIMITS.agent_gate(f"langgraph@{self.url}")
            try:
                with gate.slot():
                    result = self.client.runs.wait(
                        None,
                        self.assistant_id,
                        input={"messages": sent},
                        config={"configurable": request.configurable()},
                    )
            except CallRefused as refused:
                return failed_turn(f"the call was not made: {refused}")
            except Exception as exc:  # guarded() turns it into an agent_error turn
                gate.failed(exc)
                raise
            gate.succeeded()
            if isinstance(result, Mapping) and result.get("__error__"):
                error = str(result["__error__"])[:200]
                return failed_turn(f"{self.name}: the server run failed: {error}")
            reply = last_ai_message(result, sent_count=len(sent))
            return turn_from_reply(reply, position=len(request.messages))

        return guarded(self.name, produce)
