"""Reading a judge's answer out of free LLM text.

Models wrap JSON in ``<think>`` reasoning, prose and code fences, leave trailing commas or
write Python-style quotes; the caller gets a model instance or one short error.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

OutT = TypeVar("OutT", bound=BaseModel)

_REASONING_BLOCK = re.compile(r"<(think|thinking)>.*?</\1>", re.DOTALL | re.IGNORECASE)
_REASONING_CLOSE = re.compile(r"</(?:think|thinking)>", re.IGNORECASE)
_REASONING_OPEN = re.compile(r"^\s*<(?:think|thinking)>", re.IGNORECASE)
_FENCE = re.compile(r"```[A-Za-z0-9_+-]*")
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_CLOSERS = {"{": "}", "[": "]"}
_FEEDBACK_LIMIT = 2000


class OutputParseError(ValueError):
    """No usable JSON, or none matching the output model (``feedback`` is sent on a retry)."""

    def __init__(self, reason: str, feedback: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.feedback = (feedback or reason)[:_FEEDBACK_LIMIT]


def strip_reasoning(text: str) -> str:
    """Remove ``<think>``/``<thinking>`` reasoning and code fences from ``text``.

    Handles closed blocks, a lone closing tag (chat templates such as DeepSeek-R1's open
    ``<think>`` inside the prompt, so only the close reaches us) and an unclosed opening tag
    at the start (reasoning cut off or never closed: the tag goes, the rest is searched).
    """
    text = _REASONING_BLOCK.sub("", text)
    closes = list(_REASONING_CLOSE.finditer(text))
    if closes:
        text = text[closes[-1].end() :]
    text = _REASONING_OPEN.sub("", text, count=1)
    return _FENCE.sub("", text)


def json_candidates(text: str) -> list[tuple[int, Any]]:
    """``(length, value)`` of the outermost JSON objects and arrays in ``text``, in order."""
    found: list[tuple[int, Any]] = []
    start = 0
    while True:
        start = _next_opening(text, start)
        if start < 0:
            return found
        end = _matching_close(text, start)
        decoded = _decode(text[start : end + 1]) if end is not None else None
        if end is not None and decoded is not None:
            found.append((end + 1 - start, decoded[0]))
            start = end + 1  # outermost only: skip what is nested inside
        else:
            start += 1


def parse_json_output(text: str, output_model: type[OutT]) -> OutT:
    """Parse a model's free-text answer into ``output_model``.

    The last JSON value that validates wins (reasoning may quote examples); if none does, the
    error of the largest one is raised as :class:`OutputParseError`.
    """
    answer = strip_reasoning(text)
    candidates = json_candidates(answer)
    if not candidates:
        snippet = " ".join((answer if answer.strip() else text).split())[:80]
        raise OutputParseError(
            f"no JSON in the model output: {snippet!r}",
            "Your reply contained no JSON value. Answer with the JSON the instructions ask for.",
        )
    failures: list[tuple[int, ValidationError]] = []
    for length, value in reversed(candidates):
        try:
            return output_model.model_validate(value)
        except ValidationError as exc:
            failures.append((length, exc))
    largest = max(failures, key=lambda failure: failure[0])[1]
    raise validation_error(output_model, largest) from largest


def validation_error(output_model: type[BaseModel], exc: ValidationError) -> OutputParseError:
    """Turn a pydantic error into an :class:`OutputParseError` (short reason, full feedback)."""
    problems = [
        (".".join(str(part) for part in error["loc"]) or "<root>", error["msg"], error["input"])
        for error in exc.errors(include_url=False)
    ]
    short = "; ".join(f"{loc}: {msg}" for loc, msg, _ in problems[:3])
    detail = "\n".join(f"- {loc}: {msg} (got {str(got)[:100]!r})" for loc, msg, got in problems)
    return OutputParseError(
        f"output does not match {output_model.__name__}: {short}",
        f"Your JSON did not match the required format:\n{detail}",
    )


def _next_opening(text: str, start: int) -> int:
    positions = [pos for pos in (text.find("{", start), text.find("[", start)) if pos >= 0]
    return min(positions, default=-1)


def _matching_close(text: str, start: int) -> int | None:
    """Index of the bracket closing ``text[start]``, skipping quoted strings; None if none."""
    expected: list[str] = []
    quote: str | None = None
    escaped = False
    for index in range(start, len(text)):
        char = text[index]
        if quote is not None:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = None
        elif char in "\"'":
            quote = char
        elif char in _CLOSERS:
            expected.append(_CLOSERS[char])
        elif char in "}]":
            if expected.pop() != char:
                return None
            if not expected:
                return index
    return None


def _decode(segment: str) -> tuple[Any] | None:
    """Decode one bracketed segment leniently; a 1-tuple holding the value, or None."""
    for attempt in (segment, _TRAILING_COMMA.sub(r"\1", segment)):
        try:
            # strict=False: models put raw newlines inside strings.
            return (json.loads(attempt, strict=False),)
        except ValueError:
            pass
    try:
        # Python-style output ('single quotes', True/None); literal_eval runs no code.
        value = ast.literal_eval(segment)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return (value,) if isinstance(value, dict | list) else None
