"""A plain Python callable as the agent under test (``python:package.module:function``).

Called once per agent turn as ``function(messages, tools)`` plus whichever of ``policy``,
``task_id`` and ``trial`` its signature takes. ``messages`` is a deep copy, so the function
cannot change the harness's record. It returns an
:class:`~nodes.simulation.agents.base.AgentTurn`, a string, an ``AIMessage`` or a message dict;
an object with a ``respond`` method is called as ``respond(messages, tools, task_id=...,
trial=...)``.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable
from typing import Any

from todeval.nodes.simulation.agents.base import AgentRequest, AgentTurn
from todeval.nodes.simulation.agents.loader import AgentSpecError, import_object
from todeval.nodes.simulation.agents.turns import guarded, turn_from_reply

_KEYWORDS = ("policy", "task_id", "trial")


class CallableAgent:
    """A Python function (or an agent object) found by import path; ``function`` overrides it."""

    def __init__(self, target: str, *, policy: str, function: Any = None) -> None:
        self.name = f"python:{target}"
        found = function if function is not None else import_object(target, spec=self.name)
        self.policy = policy
        respond = getattr(found, "respond", None)
        if callable(respond) and not inspect.isclass(found):
            self._call: Callable[..., Any] = respond
            self._keywords: tuple[str, ...] = ("task_id", "trial")
            return
        if not callable(found):
            raise AgentSpecError(
                f"agent spec {self.name!r}: {type(found).__name__} is not callable"
            )
        self._call = found
        self._keywords = _accepted_keywords(found)

    def respond(self, request: AgentRequest) -> AgentTurn:
        """Call the function on a copy of the conversation and read what it returns."""
        offered = {"policy": self.policy, "task_id": request.task_id, "trial": request.trial}
        keywords = {name: offered[name] for name in self._keywords}

        def produce() -> AgentTurn:
            conversation = copy.deepcopy([dict(m) for m in request.messages])
            tools = copy.deepcopy([dict(t) for t in request.tools])
            value = self._call(conversation, tools, **keywords)
            return turn_from_reply(value, position=len(request.messages))

        return guarded(self.name, produce)


def _accepted_keywords(function: Callable[..., Any]) -> tuple[str, ...]:
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):  # builtins without a signature: positional only
        return ()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return _KEYWORDS
    names = {p.name for p in parameters if p.kind is not inspect.Parameter.POSITIONAL_ONLY}
    return tuple(name for name in _KEYWORDS if name in names)
