"""Made-up arguments: a tool call whose identifiers come from nowhere in the dialogue (issue 29).

An agent that calls a tool with identifiers it invented (a customer id, an order number, a
name nobody said) does not act on the user's request, even when the call is well formed and
the tool answers (an empty search, a parked task). A call is *made up* when it has
identifier-like arguments (strings of at most :data:`MAX_IDENTIFIER_WORDS` words and at least
:data:`MIN_IDENTIFIER` characters once lower-cased to letters and digits: ids, names, dates)
and none of them appears in what the user said or a tool returned before the call. One
grounded identifier is enough: a real agent often computes a date or picks an enum value
beside the account id the user gave. Numbers, booleans and free text (summaries, reasons) are
never held against a call. A hand-over (``transfer_to_human_agents``) is not made up but does
no work on the task either.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import Any

from todeval.evals.goal_shift_schema import Message, ToolCall

TRANSFER_TOOL = "transfer_to_human_agents"
"""The tau2 hand-over tool: a call of it passes the user on instead of working on the task."""

MIN_IDENTIFIER = 3
"""Shorter strings (``"us"``, ``"id"``) are not read as identifiers."""

MAX_IDENTIFIER_WORDS = 3
"""Longer strings are free text (a summary, a reason), not an identifier."""

_NOT_ALNUM = re.compile(r"[^a-z0-9]+")
_WORD = re.compile(r"[a-z]+")
_TOOL_VERBS = frozenset("list find search check calculate details".split())


def _squeezed(text: str) -> str:
    return _NOT_ALNUM.sub("", text.lower())


def scalars(value: Any) -> Iterator[Any]:
    """Every scalar inside a tool call's arguments (nested objects and lists read, in order).

    Shared with goal tracking's tool evidence (:mod:`nodes.goal_tracking.evidence`).
    """
    if isinstance(value, Mapping):
        for item in value.values():
            yield from scalars(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from scalars(item)
    else:
        yield value


def identifiers(arguments: Any) -> Iterator[str]:
    """The identifier-like string values of ``arguments`` (nested lists and objects read)."""
    for value in scalars(arguments):
        if isinstance(value, str) and len(value.split()) <= MAX_IDENTIFIER_WORDS:
            squeezed = _squeezed(value)
            if len(squeezed) >= MIN_IDENTIFIER:
                yield squeezed


def grounding_text(messages: Sequence[Message], before_turn: int) -> str:
    """What the user said and the tools returned before ``before_turn``, squeezed."""
    return "".join(
        _squeezed(m.content)
        for m in messages
        if m.turn < before_turn and m.role in ("user", "tool")
    )


def made_up(call: ToolCall, grounding: str) -> bool:
    """The call has identifiers and none of them is in ``grounding`` (:func:`grounding_text`)."""
    found = list(_identifiers_of(call))
    return bool(found) and not any(value in grounding for value in found)


def serving_calls(
    messages: Sequence[Message], task_tools: Collection[str] | None = None
) -> set[str]:
    """Ids of the assistant's calls that serve the task.

    A call serves the task when it is not a hand-over and either names something of the
    dialogue (an identifier the user said or a tool returned) or has no identifier at all
    and is a tool the task's action sets allow (when ``task_tools`` is None or empty: a tool
    about something the user named, "airports" for ``list_all_airports``). A listing nobody
    asked for, picked at random, does not serve.
    """
    serving: set[str] = set()
    for message in messages:
        if message.role != "assistant":
            continue
        grounding: str | None = None
        for call in message.tool_calls:
            if call.name == TRANSFER_TOOL:
                continue
            found = list(_identifiers_of(call))
            if not found:
                asked = call.name in task_tools if task_tools else _asked_for(call, messages)
                if asked:
                    serving.add(call.id)
                continue
            grounding = grounding_text(messages, message.turn) if grounding is None else grounding
            if any(value in grounding for value in found):
                serving.add(call.id)
    return serving


def _asked_for(call: ToolCall, messages: Sequence[Message]) -> bool:
    """The user named what the tool is about (``list_all_airports``: "airports") before."""
    topic = {w for w in _words(call.name.replace("_", " ")) if w not in _TOOL_VERBS}
    return any(
        topic & _words(m.content)
        for m in messages
        if m.role == "user" and m.turn < _turn_of(call, messages)
    )


def _turn_of(call: ToolCall, messages: Sequence[Message]) -> int:
    return next((m.turn for m in messages if call in m.tool_calls), len(messages))


def _words(text: str) -> set[str]:
    return {w.rstrip("s") for w in _WORD.findall(text.lower()) if len(w) > 3}


def _identifiers_of(call: ToolCall) -> Iterator[str]:
    return identifiers(call.arguments if call.arguments is not None else call.raw_arguments)
