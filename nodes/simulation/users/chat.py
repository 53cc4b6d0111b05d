"""Conversations as the simulated user sees them, whatever form they come in.

OpenAI / tau2 message dicts, LangChain-style dicts and MAP's
:class:`~evals.memory_schema.MsTodTurn` pairs are all read into :class:`ChatTurn` s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from todeval.evals.datasets.tau2_messages import message_text
from todeval.evals.memory_schema import MsTodTurn

Role = Literal["user", "assistant", "tool"]

_ROLES: dict[str, Role] = {
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "system": "assistant",  # MsTodTurn's speaker for the dialogue system
    "tool": "tool",
}


@dataclass(frozen=True)
class ChatTurn:
    """One message: who sent it, its text, the tools it called, or the result it carries.

    ``text`` has tau2's ``{"message": ...}`` wrapper removed; ``calls`` are ``(call id, tool
    name)`` pairs.
    """

    role: Role
    text: str = ""
    calls: tuple[tuple[str, str], ...] = ()
    call_id: str | None = None
    error: bool = False


def read_chat(messages: Sequence[Mapping[str, Any] | MsTodTurn | ChatTurn]) -> tuple[ChatTurn, ...]:
    """The messages as :class:`ChatTurn` s (system messages and unknown roles left out)."""
    turns: list[ChatTurn] = []
    for message in messages:
        if isinstance(message, ChatTurn):
            turns.append(message)
        elif isinstance(message, MsTodTurn):
            turns.append(ChatTurn(role=_ROLES[message.speaker], text=message.utterance))
        elif isinstance(message, Mapping):
            turn = _from_mapping(message)
            if turn is not None:
                turns.append(turn)
    return tuple(turns)


def as_ms_tod_turns(history: Sequence[Mapping[str, Any] | MsTodTurn]) -> list[MsTodTurn]:
    """MAP's turn pairs: MsTodTurns as they are, message dicts' text turns as MsTodTurns."""
    turns: list[MsTodTurn] = []
    for item in history:
        if isinstance(item, MsTodTurn) or (isinstance(item, Mapping) and "speaker" in item):
            turns.append(MsTodTurn.model_validate(item))
            continue
        for turn in read_chat([item]):
            if turn.role != "tool" and turn.text.strip():
                speaker = "user" if turn.role == "user" else "system"
                turns.append(MsTodTurn(speaker=speaker, utterance=turn.text))
    return turns


def render_chat(chat: Sequence[ChatTurn], *, you: str = "You", agent: str = "Agent") -> str:
    """The text turns as an LLM user reads them (the agent's tool calls are not shown to it)."""
    lines = [
        f"{you if turn.role == 'user' else agent}: {turn.text.strip()}"
        for turn in chat
        if turn.role != "tool" and turn.text.strip()
    ]
    return "\n".join(lines) or "(the conversation has not started)"


def last_agent_text(chat: Sequence[ChatTurn]) -> str:
    """What the agent said since the user's last message (texts joined), else ""."""
    said: list[str] = []
    for turn in reversed(chat):
        if turn.role == "user":
            break
        if turn.role == "assistant" and turn.text.strip():
            said.append(turn.text.strip())
    return " ".join(reversed(said))


def _from_mapping(message: Mapping[str, Any]) -> ChatTurn | None:
    raw_role = str(message.get("role", message.get("type", ""))).lower()
    role = _ROLES.get(raw_role)
    if role is None or raw_role == "system":
        return None  # a system prompt is not part of what the user sees
    text = message_text(message.get("content"))
    if role == "tool":
        call_id = message.get("tool_call_id") or message.get("id")
        return ChatTurn("tool", text, call_id=str(call_id or ""), error=bool(message.get("error")))
    calls = tuple(_call(raw, index) for index, raw in enumerate(message.get("tool_calls") or []))
    return ChatTurn(role, text, calls=tuple(c for c in calls if c[1]))


def _call(raw: Any, index: int) -> tuple[str, str]:
    if not isinstance(raw, Mapping):
        return ("", "")
    function = raw.get("function")
    name = (function if isinstance(function, Mapping) else raw).get("name")
    return (str(raw.get("id") or f"call_{index}"), str(name or ""))
