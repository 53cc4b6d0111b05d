"""Replaying a recorded agent (``replay:PATH``): the agent turns of a tau2 results file.

The k-th agent turn of (task id, trial) is the k-th recorded assistant message, call ids kept,
whatever the user says now; ``k`` counts the assistant messages so far, so the replay keeps
no state and a resumed conversation continues where it stopped. When the recorded turns run
out the turn is an ``agent_stop`` error; an unknown task or trial, or a recorded turn the
adapters would reject, is an ``agent_error`` turn.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from todeval.nodes.simulation.agents.base import AgentRequest, AgentTurn, Message
from todeval.nodes.simulation.agents.loader import AgentSpecError
from todeval.nodes.simulation.agents.turns import (
    AGENT_STOP,
    MalformedTurn,
    failed_turn,
    turn_from_reply,
)


class ReplayAgent:
    """The recorded agent of a tau2 / AgentChangeBench results file."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()
        self.name = f"replay:{path}"
        self._turns = _recorded_turns(self.path, self.name)

    @property
    def conversations(self) -> list[tuple[str, int]]:
        """The (task id, trial) pairs the file holds, in file order."""
        return list(self._turns)

    def turns_left(self, request: AgentRequest) -> int:
        """Recorded agent turns not yet replayed in this conversation (0 for an unknown one)."""
        recorded = self._turns.get((str(request.task_id), int(request.trial))) or []
        return max(0, len(recorded) - _agent_turns(request.messages))

    def respond(self, request: AgentRequest) -> AgentTurn:
        """The recorded turn after as many agent turns as ``messages`` holds."""
        task_id, trial = request.task_id, request.trial
        recorded = self._turns.get((str(task_id), int(trial)))
        if recorded is None:
            trials = sorted(t for task, t in self._turns if task == str(task_id))
            held = f"trials {trials}" if trials else "no trial of it"
            return failed_turn(
                f"{self.name} has no conversation for task {task_id!r} trial {trial} ({held})"
            )
        position = _agent_turns(request.messages)
        if position >= len(recorded):
            return failed_turn(
                f"the recorded agent turns of task {task_id!r} trial {trial} ran out after "
                f"{len(recorded)} turns",
                kind=AGENT_STOP,
            )
        return recorded[position].model_copy(deep=True)


def _recorded_turns(path: Path, spec: str) -> dict[tuple[str, int], list[AgentTurn]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise AgentSpecError(f"agent spec {spec!r}: cannot read the results file: {exc}") from exc
    simulations = data.get("simulations") if isinstance(data, Mapping) else data
    if not isinstance(simulations, list) or not simulations:
        raise AgentSpecError(f"agent spec {spec!r}: {path} holds no 'simulations'")
    turns: dict[tuple[str, int], list[AgentTurn]] = {}
    for index, simulation in enumerate(simulations):
        if not isinstance(simulation, Mapping) or simulation.get("task_id") is None:
            raise AgentSpecError(f"agent spec {spec!r}: simulations.{index} has no task_id")
        key = (str(simulation["task_id"]), _trial(simulation.get("trial")))
        messages = simulation.get("messages") or []
        turns[key] = [
            _recorded(message, position)
            for position, message in enumerate(messages)
            if isinstance(message, Mapping) and message.get("role") == "assistant"
        ]
    return turns


def _agent_turns(messages: Sequence[Message]) -> int:
    return sum(1 for message in messages if message.get("role") == "assistant")


def _recorded(message: Mapping[str, Any], position: int) -> AgentTurn:
    try:
        return turn_from_reply(message, position=position)
    except MalformedTurn as exc:
        return failed_turn(f"the recorded agent turn at message {position} is malformed: {exc}")


def _trial(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
