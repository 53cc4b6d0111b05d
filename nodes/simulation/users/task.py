"""An AgentChangeBench / tau2 task's user: the scenario a task user simulator plays."""

from __future__ import annotations

import functools
import json
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable

from todeval.evals.datasets.tau2_personas import read_personas
from todeval.nodes.simulation.users.chat import ChatTurn
from todeval.nodes.simulation.users.scenario import SimulatedTurn
from todeval.stores.paths import data_dir

STOP = "###STOP###"
TRANSFER = "###TRANSFER###"
OUT_OF_SCOPE = "###OUT-OF-SCOPE###"
CONTROL_TOKENS = (STOP, TRANSFER, OUT_OF_SCOPE)
"""tau2's user control tokens: goal satisfied, transferred, the scenario cannot go on."""


class ScenarioError(ValueError):
    """A task's user scenario cannot be read (the message names the field)."""


def agentchangebench_dir(root: Path | None = None) -> Path:
    """``$TODEVAL_DATA_DIR/agentchangebench`` (or ``root/agentchangebench``)."""
    return (root or data_dir()) / "agentchangebench"


@dataclass(frozen=True, kw_only=True)
class TaskScenario:
    """What a task's simulated user knows, wants and is like (a task's ``user_scenario``).

    ``persona_name`` (``EASY_1``) resolves through the domain's ``user_personas.json``;
    ``turns_per_goal`` is the most user messages on one goal before moving on (AgentChangeBench's
    banking user policy, RULE 1: four); ``max_user_turns`` the most in a conversation;
    ``failed_turns_to_leave`` the agent turns in a row that must fail the user (see
    :mod:`~nodes.simulation.users.failures`) before the user leaves the goal: shifts to the
    next one, or gives up on the last; before that it pushes back and restates its request.
    Two, as the banking user policy's RULE 2 moves on after "2+ verification attempts failed".
    The recorded GPT-4.1 run is too thin to set it: its only failed agent turns are two
    repeated hand-over announcements, each answered by moving on or stopping
    (``scripts/user_reactions.py``); one (leave at once) matches them, but then the topic
    switch hides the failure from the learned turn judges (GSR of ``floor:done`` on banking's
    first 20 tasks: 0.57 with one, 0.0 with two).
    """

    task_id: str
    domain: str
    persona_name: str | None = None
    persona: str = ""
    reason_for_call: str = ""
    known_info: str = ""
    unknown_info: str = ""
    task_instructions: str = ""
    goals: tuple[str, ...] = ()
    required_shifts: int | None = None
    turns_per_goal: int = 4
    max_user_turns: int = 20
    failed_turns_to_leave: int = 2

    @classmethod
    def from_task(
        cls,
        task: Mapping[str, Any],
        *,
        domain: str | None = None,
        personas: Mapping[str, str] | None = None,
        data_root: Path | None = None,
    ) -> TaskScenario:
        """The scenario of a tau2 task (``{"id", "user_scenario": {...}}``).

        ``personas`` defaults to the domain's ``user_personas.json`` under
        ``$TODEVAL_DATA_DIR/agentchangebench/domains/<domain>/``; :class:`ScenarioError` for no id
        or scenario, or an unknown persona name.
        """
        task_id = task.get("id", task.get("task_id"))
        scenario = task.get("user_scenario")
        if task_id is None or not isinstance(scenario, Mapping):
            raise ScenarioError(f"task {task_id!r}: needs an 'id' and a 'user_scenario' object")
        raw = scenario.get("instructions")
        instructions = raw if isinstance(raw, Mapping) else {"reason_for_call": str(raw or "")}
        domain = str(instructions.get("domain") or task.get("domain") or domain or "")
        shifts = scenario.get("goal_shifts")
        shifts = shifts if isinstance(shifts, Mapping) else {}
        goals = shifts.get("goals") or []
        if not isinstance(goals, list) or not all(isinstance(g, str) for g in goals):
            raise ScenarioError(f"task {task_id!r}: user_scenario.goal_shifts.goals must be texts")
        name, text = _persona(scenario.get("persona"), personas, domain, data_root, str(task_id))
        required = shifts.get("required_shifts")
        return cls(
            task_id=str(task_id),
            domain=domain,
            persona_name=name,
            persona=text,
            reason_for_call=_text(instructions.get("reason_for_call")),
            known_info=_text(instructions.get("known_info")),
            unknown_info=_text(instructions.get("unknown_info")),
            task_instructions=_text(instructions.get("task_instructions")),
            goals=tuple(goals),
            required_shifts=required if isinstance(required, int) else None,
        )

    def instructions_text(self) -> str:
        """The instructions as tau2 renders them for its user simulator."""
        lines = [f"Domain: {self.domain}", f"Reason for call:\n{_indent(self.reason_for_call)}"]
        if self.known_info:
            lines.append(f"Known info:\n{_indent(self.known_info)}")
        if self.unknown_info:
            lines.append(f"Unknown info:\n{_indent(self.unknown_info)}")
        lines.append(f"Task instructions:\n{_indent(self.task_instructions)}")
        return "\n".join(lines)

    def scenario_text(self) -> str:
        """The user scenario as AgentChangeBench renders it (persona, instructions, shifts)."""
        lines = [f"Persona:\n{_indent(self.persona)}"] if self.persona else []
        lines.append(f"Instructions:\n{_indent(self.instructions_text())}")
        if self.goals:
            shifts = {"required_shifts": self.required_shifts, "goals": list(self.goals)}
            lines.append(f"Goal Shifts:\n{_indent(str(shifts))}")
        return "\n".join(lines)


@dataclass(frozen=True)
class TaskRequest:
    """Everything one task-user reply depends on (a backend's only input)."""

    scenario: TaskScenario
    seed: int
    chat: Sequence[ChatTurn]


@runtime_checkable
class TaskSimulatorBackend(Protocol):
    """A ``user_simulator`` backend that plays a task's user."""

    name: str

    def reply_task(self, request: TaskRequest) -> SimulatedTurn:
        """The user's next message in the task's conversation."""
        ...


def _persona(
    value: Any,
    personas: Mapping[str, str] | None,
    domain: str,
    data_root: Path | None,
    task_id: str,
) -> tuple[str | None, str]:
    if not isinstance(value, str) or not value.strip():
        return None, ""
    text = value.strip()
    known = personas if personas is not None else _domain_personas(domain, data_root)
    if any(c.isspace() for c in text):  # the persona's text itself: named if a file knows it
        return next((name for name, said in known.items() if said.strip() == text), None), text
    if text not in known:
        where = "the personas given" if personas is not None else f"{domain}/user_personas.json"
        raise ScenarioError(f"task {task_id!r}: persona {text!r} is not in {where}")
    return text, known[text]


def _domain_personas(domain: str, data_root: Path | None) -> Mapping[str, str]:
    path = agentchangebench_dir(data_root) / "domains" / domain / "user_personas.json"
    return _read_personas(str(path))


@functools.lru_cache(maxsize=8)
def _read_personas(path: str) -> Mapping[str, str]:
    # Read once per process: the harness rebuilds the scenario for every user turn.
    return MappingProxyType(read_personas(Path(path))) if Path(path).is_file() else {}


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value.strip() if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _indent(text: str) -> str:
    return textwrap.indent(text, "\t")
