"""Environment fidelity: does an environment return what a recorded run's environment returned?

Every recorded tool call is run, in order, against a fresh environment of its task and the
result compared with the recorded one (as JSON when both parse, else as text, plus the error
flag). A faithful replay means the recorded conversations are valid transcripts of todeval's
environment.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from todeval.nodes.simulation.environments.base import ToolCall, ToolEnvironment


@dataclass(frozen=True)
class ToolDifference:
    """One call whose result differs from the recorded one."""

    task_id: str
    call_id: str
    name: str
    arguments: dict[str, Any]
    recorded: str
    produced: str
    recorded_error: bool
    produced_error: bool


@dataclass
class FidelityReport:
    """How many recorded calls the environment reproduced, and the ones it did not."""

    calls: int = 0
    identical: int = 0
    differences: list[ToolDifference] = field(default_factory=list)

    @property
    def share(self) -> float:
        """Share of calls whose result is identical (1.0 when there were none)."""
        return self.identical / self.calls if self.calls else 1.0


def as_json(text: str) -> Any:
    """``text`` parsed as JSON, or the text itself when it is not JSON."""
    try:
        return json.loads(text)
    except (json.JSONDecodeError, TypeError):
        return text


def recorded_calls(messages: Iterable[Mapping[str, Any]]) -> list[tuple[ToolCall, str, bool]]:
    """Each tool call of a tau2 transcript with its recorded result text and error flag.

    Calls without a recorded result are left out (there is nothing to compare with).
    """
    messages = list(messages)
    results = {
        str(m.get("id") or m.get("tool_call_id")): m for m in messages if m.get("role") == "tool"
    }
    calls = []
    for message in messages:
        for raw in message.get("tool_calls") or []:
            result = results.get(str(raw.get("id")))
            if result is None:
                continue
            arguments = raw.get("arguments")
            call = ToolCall(
                id=str(raw.get("id")),
                name=str(raw.get("name")),
                arguments=arguments if isinstance(arguments, dict) else {},
            )
            calls.append((call, str(result.get("content") or ""), bool(result.get("error"))))
    return calls


def replay_recorded_run(
    simulations: Iterable[Mapping[str, Any]],
    tasks: Mapping[str, Mapping[str, Any]],
    make_environment: Callable[[Mapping[str, Any]], ToolEnvironment],
) -> FidelityReport:
    """Replay every recorded call of ``simulations`` and compare results (see the module doc)."""
    report = FidelityReport()
    for simulation in simulations:
        task_id = str(simulation.get("task_id"))
        environment = make_environment(tasks.get(task_id) or {"id": task_id})
        for call, recorded, recorded_error in recorded_calls(simulation.get("messages") or []):
            result = environment.call(call)
            report.calls += 1
            if as_json(result.content) == as_json(recorded) and result.error == recorded_error:
                report.identical += 1
                continue
            report.differences.append(
                ToolDifference(
                    task_id=task_id,
                    call_id=call.id,
                    name=call.name,
                    arguments=dict(call.arguments),
                    recorded=recorded,
                    produced=result.content,
                    recorded_error=recorded_error,
                    produced_error=result.error,
                )
            )
    return report
