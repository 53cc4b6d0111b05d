"""What an adapter makes of an agent's answer: an :class:`AgentTurn`, or why there is none.

Every adapter funnels its output through here, so bad behaviour reads the same whatever the
agent is; such a turn is ``AgentTurn(error=...)`` starting with the tau2 termination reason
(:data:`AGENT_ERROR` or :data:`AGENT_STOP`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage

from todeval.nodes.judges.redact import error_text
from todeval.nodes.simulation.agents.base import AgentTurn
from todeval.nodes.simulation.environments.base import ToolCall

AGENT_ERROR = "agent_error"
"""tau2's termination reason for an agent that produced no usable turn."""
AGENT_STOP = "agent_stop"
"""tau2's termination reason for an agent that ended the conversation (a replay ran out)."""

_AI_ROLES = frozenset({"assistant", "ai", "AIMessageChunk"})


class MalformedTurn(ValueError):
    """The agent's answer cannot be read as a turn (the message says what is wrong)."""


def failed_turn(reason: str, *, kind: str = AGENT_ERROR) -> AgentTurn:
    """A turn that ends the conversation: ``"<kind>: <reason>"``."""
    return AgentTurn(error=f"{kind}: {reason}")


def termination_reason(turn: AgentTurn) -> str | None:
    """The tau2 termination reason an error turn asks for (None for a usable turn)."""
    if turn.error is None:
        return None
    head = turn.error.split(":", 1)[0].strip()
    return head if head in (AGENT_ERROR, AGENT_STOP) else AGENT_ERROR


def guarded(agent: str, produce: Callable[[], AgentTurn]) -> AgentTurn:
    """``produce()``, with any exception or malformed answer turned into an error turn."""
    try:
        return produce()
    except MalformedTurn as exc:
        return failed_turn(f"{agent} returned a malformed turn: {exc}")
    except Exception as exc:  # the agent under test is foreign code: anything can happen
        return failed_turn(f"{agent} raised {error_text(exc, 300)}")


def turn_from_ai_message(message: AIMessage, *, position: int) -> AgentTurn:
    """A LangChain AI message as a turn (``position``: where it lands, for missing call ids).

    Raises:
        MalformedTurn: Unparsable tool calls, a call without a name or with non-object
            arguments, or neither text nor calls.
    """
    if message.invalid_tool_calls:
        bad = message.invalid_tool_calls[0]
        raise MalformedTurn(
            f"tool call {bad.get('name') or '(no name)'!r}: arguments are not valid JSON "
            f"({str(bad.get('error') or bad.get('args'))[:120]})"
        )
    calls = [
        _tool_call(call.get("id"), call.get("name"), call.get("args"), position, index)
        for index, call in enumerate(message.tool_calls)
    ]
    return _turn(str(message.text), calls)


def turn_from_reply(value: Any, *, position: int) -> AgentTurn:
    """Whatever a callable or a server returned, as a turn.

    An :class:`AgentTurn`, an ``AIMessage``, a string or a message mapping in tau2, OpenAI or
    LangChain form; raises :class:`MalformedTurn` as :func:`turn_from_ai_message` does.
    """
    if isinstance(value, AgentTurn):
        if value.error is None and not (value.content or "").strip() and not value.tool_calls:
            raise MalformedTurn("neither text nor tool calls")
        return value
    if isinstance(value, AIMessage):
        return turn_from_ai_message(value, position=position)
    if isinstance(value, str):
        return _turn(value, [])
    if not isinstance(value, Mapping):
        raise MalformedTurn(f"expected a message, got {type(value).__name__}")
    role = value.get("role", value.get("type"))
    if role is not None and role not in _AI_ROLES:
        raise MalformedTurn(f"expected an assistant message, got role {role!r}")
    if value.get("invalid_tool_calls"):
        bad = value["invalid_tool_calls"][0]
        name = bad.get("name") if isinstance(bad, Mapping) else None
        raise MalformedTurn(f"tool call {name or '(no name)'!r}: arguments are not valid JSON")
    raw_calls = value.get("tool_calls") or []
    if not isinstance(raw_calls, Sequence) or isinstance(raw_calls, str):
        raise MalformedTurn("tool_calls must be a list")
    calls = [_mapping_call(call, position, index) for index, call in enumerate(raw_calls)]
    return _turn(content_text(value.get("content")), calls)


def content_text(content: Any) -> str:
    """Message content as text: a string, or the text blocks of a content list."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            block if isinstance(block, str) else str(block.get("text", ""))
            for block in content
            if isinstance(block, str)
            or (isinstance(block, Mapping) and block.get("type") == "text")
        ]
        return "".join(parts)
    raise MalformedTurn(f"content must be text, got {type(content).__name__}")


def _mapping_call(raw: Any, position: int, index: int) -> ToolCall:
    if not isinstance(raw, Mapping):
        raise MalformedTurn(f"tool call {index} is not an object")
    function = raw.get("function")
    source = function if isinstance(function, Mapping) else raw
    arguments = source.get("arguments", source.get("args"))
    return _tool_call(raw.get("id"), source.get("name"), arguments, position, index)


def _tool_call(call_id: Any, name: Any, arguments: Any, position: int, index: int) -> ToolCall:
    if not isinstance(name, str) or not name.strip():
        raise MalformedTurn(f"tool call {index} has no name")
    if arguments is None:
        arguments = {}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as exc:
            raise MalformedTurn(
                f"tool call {name!r}: arguments are not valid JSON ({exc})"
            ) from exc
    if not isinstance(arguments, dict):
        raise MalformedTurn(
            f"tool call {name!r}: arguments must be a JSON object, got {type(arguments).__name__}"
        )
    # Calls need ids to pair with their results; a missing one is derived from the position
    # (stable, so a resumed conversation names it the same).
    identifier = call_id if isinstance(call_id, str) and call_id else f"call_{position}_{index}"
    return ToolCall(id=identifier, name=name.strip(), arguments=arguments)


def _turn(text: str, calls: list[ToolCall]) -> AgentTurn:
    if not text.strip() and not calls:
        raise MalformedTurn("neither text nor tool calls")
    return AgentTurn(content=text if text.strip() else None, tool_calls=calls)
