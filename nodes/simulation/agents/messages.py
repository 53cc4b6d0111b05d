"""The conversation as an agent reads it: tau2 message dicts -> LangChain messages or JSON."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from todeval.nodes.simulation.agents.base import Message


@dataclass(frozen=True)
class _Call:
    id: str
    name: str
    args: dict[str, Any]


def to_langchain(
    messages: Sequence[Message],
    *,
    system: str | None = None,
    fold_tool_results: bool = False,
    tool_call_text: str = "",
) -> list[BaseMessage]:
    """The conversation as LangChain messages, the domain policy first as the system message.

    Args:
        messages: tau2-style message dicts.
        system: The system prompt (the domain policy); None or empty for none.
        fold_tool_results: Each run of tool results as one user message, for chat templates
            that drop tool messages (llama.cpp's ``chatml-function-calling``).
        tool_call_text: The text of an assistant turn that only calls tools: some servers
            reject ChatOpenAI's ``content: null`` (llama.cpp: HTTP 500); a space goes through.
    """
    out: list[BaseMessage] = [SystemMessage(system)] if system and system.strip() else []
    folded: list[str] = []
    for message in messages:
        role = str(message.get("role", "")).lower()
        text = _text(message.get("content"))
        if role == "tool" and fold_tool_results:
            folded.append(_tool_line(message, text))
            continue
        if folded:
            out.append(HumanMessage("Tool results:\n" + "\n".join(folded)))
            folded = []
        if role in ("system", "developer"):
            out.append(SystemMessage(text))
        elif role == "user":
            out.append(HumanMessage(text))
        elif role == "assistant":
            calls = _calls(message)
            out.append(
                AIMessage(
                    content=text if text.strip() or not calls else tool_call_text,
                    tool_calls=[{"id": c.id, "name": c.name, "args": c.args} for c in calls],
                )
            )
        elif role == "tool":
            out.append(
                ToolMessage(
                    content=text,
                    tool_call_id=_result_id(message),
                    status="error" if message.get("error") else "success",
                )
            )
    if folded:
        out.append(HumanMessage("Tool results:\n" + "\n".join(folded)))
    return out


def to_json_messages(messages: Sequence[Message], *, system: str | None) -> list[dict[str, Any]]:
    """Role-style message dicts a LangGraph server's ``add_messages`` reads (the policy first)."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for message in messages:
        role = str(message.get("role", "")).lower()
        item: dict[str, Any] = {"role": role, "content": _text(message.get("content"))}
        if role == "assistant":
            calls = _calls(message)
            if calls:
                item["tool_calls"] = [{"id": c.id, "name": c.name, "args": c.args} for c in calls]
        elif role == "tool":
            item["tool_call_id"] = _result_id(message)
        elif role not in ("user", "system"):
            continue
        out.append(item)
    return out


def _text(content: Any) -> str:
    if content is None:
        return ""
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)


def _calls(message: Mapping[str, Any]) -> list[_Call]:
    """The recorded calls of an assistant message (ours are well formed; others best effort)."""
    calls = []
    for index, raw in enumerate(message.get("tool_calls") or []):
        if not isinstance(raw, Mapping):
            continue
        function = raw.get("function")
        source = function if isinstance(function, Mapping) else raw
        args = source.get("arguments", source.get("args")) or {}
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except json.JSONDecodeError:
                args = {"raw_arguments": args}
        call_id = str(raw.get("id") or f"call_{index}")
        calls.append(
            _Call(
                call_id, str(source.get("name") or ""), dict(args) if isinstance(args, dict) else {}
            )
        )
    return calls


def _result_id(message: Mapping[str, Any]) -> str:
    # tau2 stores a tool result's call id as "id"; OpenAI as "tool_call_id".
    return str(message.get("tool_call_id") or message.get("id") or "")


def _tool_line(message: Mapping[str, Any], text: str) -> str:
    status = " (error)" if message.get("error") else ""
    return f"- call {_result_id(message)}{status}: {text}"
