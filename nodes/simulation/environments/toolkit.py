"""What every tool environment shares: tool specs, argument checks, dispatch and replay.

A domain implements each :class:`ToolSpec` as a method ``_tool_<name>(**arguments)`` that
returns what the agent reads or raises :class:`ToolError`. Dispatch never raises: an unknown
tool, a bad argument or a refusal comes back as an ``error=True`` result reading
``Error: ...``, as tau2 returns them, with ``error_kind`` ``call``; ``environment`` only when a
tool itself crashed. Tools validate before they mutate, so a refused call changes nothing,
and :meth:`ToolEnvironmentBase.replay` always lands on the same state.
"""

from __future__ import annotations

import ast
import copy
import json
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from todeval.nodes.simulation.environments.base import ToolCall, ToolResult

_JSON_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    # bool is an int in Python but never a number in JSON Schema.
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
}


class ToolError(Exception):
    """A tool refused the call; the agent reads ``Error: <message>``."""


@dataclass(frozen=True)
class Param:
    """One tool parameter: its JSON type, what it is, and whether it must be given."""

    name: str
    type: str
    description: str
    required: bool = True
    items: str | None = None
    """Element type of an ``array`` parameter."""

    def schema(self) -> dict[str, Any]:
        """The JSON schema of this parameter."""
        schema: dict[str, Any] = {"type": self.type, "description": self.description}
        if self.items:
            schema["items"] = {"type": self.items}
        return schema


@dataclass(frozen=True)
class ToolSpec:
    """A tool as the agent sees it: name, description and parameters."""

    name: str
    description: str
    params: tuple[Param, ...] = ()

    def schema(self) -> dict[str, Any]:
        """The tool as an OpenAI function schema."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": {
                    "type": "object",
                    "properties": {p.name: p.schema() for p in self.params},
                    "required": [p.name for p in self.params if p.required],
                    "additionalProperties": False,
                },
            },
        }

    def check(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The arguments with every optional parameter present (None when not given).

        Raises :class:`ToolError` for a missing, unknown or wrongly typed argument (None is accepted
        for optional parameters).
        """
        known = {p.name: p for p in self.params}
        unknown = sorted(set(arguments) - set(known))
        if unknown:
            raise ToolError(f"{self.name}() got unexpected argument(s): {', '.join(unknown)}")
        checked: dict[str, Any] = {}
        for param in self.params:
            value = arguments.get(param.name)
            if value is None:
                if param.required:
                    raise ToolError(f"{self.name}() missing required argument: '{param.name}'")
                checked[param.name] = None
                continue
            if not _JSON_TYPES[param.type](value):
                raise ToolError(f"argument '{param.name}' must be of type {param.type}")
            if param.items and not all(_JSON_TYPES[param.items](v) for v in value):
                raise ToolError(f"argument '{param.name}' must be a list of {param.items}s")
            checked[param.name] = value
        return checked


class ToolEnvironmentBase:
    """Dispatch, error handling and replay for a domain (see the module doc).

    Subclasses set :attr:`domain` and :attr:`tools` and implement :meth:`reset`, :meth:`snapshot`
    and the ``_tool_<name>`` methods.
    """

    domain: str = ""
    tools: tuple[ToolSpec, ...] = ()

    def __init__(self, task: Mapping[str, Any] | None = None) -> None:
        """A fresh trial of ``task`` (this default ignores the task and calls :meth:`reset`)."""
        self.reset()

    def tool_schemas(self) -> list[dict[str, Any]]:
        """The tools as OpenAI function schemas."""
        return [spec.schema() for spec in self.tools]

    def call(self, call: ToolCall) -> ToolResult:
        """Run one call; every failure is an ``error`` result, never an exception."""
        spec = next((s for s in self.tools if s.name == call.name), None)
        if spec is None:
            return _error(call, f"Tool '{call.name}' not found.", "call")
        try:
            arguments = spec.check(call.arguments)
            content = getattr(self, f"_tool_{spec.name}")(**arguments)
        except ToolError as exc:
            return _error(call, str(exc), "call")
        except Exception as exc:  # a bug in a tool must not end the conversation
            return _error(call, f"{type(exc).__name__}: {exc}", "environment")
        return ToolResult(call_id=call.id, name=call.name, content=str(content))

    def replay(self, log: Sequence[ToolCall]) -> None:
        """Reset to the fresh database, then apply ``log`` in order (results discarded)."""
        self.reset()
        for call in log:
            self.call(call)

    def reset(self) -> None:
        """Back to the fresh database of this trial."""
        raise NotImplementedError

    def snapshot(self) -> Mapping[str, Any]:
        """The database now, as JSON-able data."""
        raise NotImplementedError


def _error(call: ToolCall, message: str, kind: Literal["call", "environment"]) -> ToolResult:
    return ToolResult(
        call_id=call.id, name=call.name, content=f"Error: {message}", error=True, error_kind=kind
    )


def dumps(value: Any) -> str:
    """JSON as tau2 writes tool results (``json.dumps`` defaults: ASCII, ``", "``)."""
    return json.dumps(value)


def initialization(task: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """A task's ``initial_state.initialization_data`` (``agent_data``, ``user_data``), or {}.

    Raises:
        ValueError: The task has agent-side ``initialization_actions``, which todeval does not
            run (no AgentChangeBench task has one; user-side ones belong to the simulated user).
    """
    state = (task or {}).get("initial_state") or {}
    if not isinstance(state, Mapping):
        return {}
    actions = state.get("initialization_actions") or []
    if any(isinstance(a, Mapping) and a.get("env_type") == "assistant" for a in actions):
        raise ValueError(
            f"task {(task or {}).get('id')!r}: agent-side initialization_actions are not supported"
        )
    init = state.get("initialization_data")
    return init if isinstance(init, Mapping) else {}


def gold_actions(task: Mapping[str, Any]) -> list[ToolCall]:
    """The task's gold actions (``evaluation_criteria.actions``) as tool calls; [] if none."""
    criteria = task.get("evaluation_criteria") or {}
    actions = criteria.get("actions") if isinstance(criteria, Mapping) else None
    return [
        ToolCall(
            id=str(action.get("action_id", f"gold-{index}")),
            name=str(action.get("name")),
            arguments=dict(action.get("arguments") or {}),
        )
        for index, action in enumerate(actions or [])
        if isinstance(action, Mapping) and action.get("name")
    ]


def deep_update(target: dict[str, Any], update: Mapping[str, Any]) -> None:
    """Merge ``update`` into ``target`` as tau2 does: objects recursively, the rest replaced."""
    for key, value in update.items():
        if isinstance(value, Mapping) and isinstance(target.get(key), dict):
            deep_update(target[key], value)
        else:
            target[key] = copy.deepcopy(value)


_OPERATORS: dict[type, Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}


def arithmetic(expression: str) -> float:
    """Evaluate + - * / over numbers and parentheses, without ``eval`` (tau2's ``calculate``)."""

    def value(node: ast.AST) -> float:
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            return float(node.value)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            sign = -1.0 if isinstance(node.op, ast.USub) else 1.0
            return sign * value(node.operand)
        if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
            return _OPERATORS[type(node.op)](value(node.left), value(node.right))
        raise ToolError("Invalid expression")

    try:
        return value(ast.parse(expression, mode="eval").body)
    except (SyntaxError, ZeroDivisionError) as exc:
        raise ToolError(f"Invalid expression: {exc}") from exc
