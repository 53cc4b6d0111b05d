"""What the simulated user knows and how it behaves, and what a backend reads and returns."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from todeval.evals.memory_schema import MsTodTurn

Disclosure = Literal["low", "medium", "high"]
Verbosity = Literal["terse", "normal", "verbose"]

_DISCLOSURE = frozenset({"low", "medium", "high"})


@dataclass(frozen=True, kw_only=True)
class Persona:
    """How the simulated user behaves.

    Attributes:
        disclosure: How much the user gives per answer, in MAP's repair loop (high answers
            everything asked at once; medium two details per turn; low one, and sometimes
            pushes back with none). Not ProactiveEval's agreeableness (resistance to guidance).
        verbosity: How many words a reply uses.
        answers_only_asked: True: the user answers only what is asked (tau2's progressive
            disclosure); False: the user also volunteers the open slots of L.
        style: Free-text persona for LLM simulators (ignored by the local one).
        seed: Varies the local simulator's wording and push-backs, reproducibly.
    """

    disclosure: Disclosure = "high"
    verbosity: Verbosity = "normal"
    answers_only_asked: bool = True
    style: str = ""
    seed: int = 0

    def __post_init__(self) -> None:
        if self.disclosure not in _DISCLOSURE:
            raise ValueError(f"disclosure must be low, medium or high: {self.disclosure!r}")
        if self.verbosity not in ("terse", "normal", "verbose"):
            raise ValueError(f"verbosity must be terse, normal or verbose: {self.verbosity!r}")

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any] | None) -> Persona:
        """A persona from a plain mapping (graph state, JSON); unknown keys are an error."""
        return cls(**dict(values or {}))


@dataclass(frozen=True, kw_only=True)
class GoalShift:
    """A change of the user's goal from reply ``at_turn`` (0-based) on.

    ``updates`` replace (or add to) the task goal; ``announcement`` None lets the simulator
    phrase it.
    """

    at_turn: int
    updates: Mapping[str, str]
    announcement: str | None = None


@dataclass(frozen=True, kw_only=True)
class UserScenario:
    """What the simulated user knows.

    ``task_goal`` is paper 001's task goal; ``focus_slots`` is MAP's L (the slots the user knows
    were missed or got wrong; empty: none in particular).
    """

    task_goal: Mapping[str, str]
    focus_slots: Sequence[str] = ()
    instructions: str = ""
    goal_shifts: Sequence[GoalShift] = ()

    def goal_at(self, turn_index: int) -> dict[str, str]:
        """The task goal in force at reply ``turn_index`` (every shift up to it applied)."""
        goal = dict(self.task_goal)
        for shift in sorted(self.goal_shifts, key=lambda s: s.at_turn):
            if shift.at_turn <= turn_index:
                goal.update(shift.updates)
        return goal

    def shift_at(self, turn_index: int) -> GoalShift | None:
        """The shift announced at reply ``turn_index``, if any."""
        return next((s for s in self.goal_shifts if s.at_turn == turn_index), None)


class SimulatedTurn(BaseModel):
    """One reply of the simulated user."""

    utterance: str = Field(description="What the user says; empty when the simulator failed.")
    revealed_slots: dict[str, str] = Field(
        default_factory=dict, description="Slot -> value the reply states (goal slots only)."
    )
    stop: bool = Field(default=False, description="The user considers the task done.")
    goal_shift: bool = Field(default=False, description="The reply announces a goal shift.")
    judge: str = Field(description="The simulator spec that produced the reply.")
    reason: str | None = Field(default=None, description="Why the utterance is empty.")
    goal_index: int | None = Field(
        default=None,
        description="Task users: the goal of the task's goal sequence the reply is on (0-based).",
    )
    goal: str | None = Field(default=None, description="Task users: that goal's label.")
    stop_token: str | None = Field(
        default=None,
        description="The control token that ends the conversation (###STOP###, ###TRANSFER###, "
        "###OUT-OF-SCOPE###); None while it goes on.",
    )
    progress_reason: str | None = Field(
        default=None, description="Task users: why the reply shifts to the next goal or stops."
    )
    declined: list[str] = Field(
        default_factory=list,
        description="Task users: what the reply says the user does not know (fact kinds or "
        "unknown_info phrases).",
    )

    @property
    def ok(self) -> bool:
        """Whether the simulator produced a reply."""
        return bool(self.utterance.strip())

    @property
    def content(self) -> str:
        """The message as tau2 records it: the utterance, then its stop token if it has one."""
        token = self.stop_token or ("###STOP###" if self.stop else None)
        return f"{self.utterance} {token}".strip() if token else self.utterance


@dataclass(frozen=True)
class SimulationRequest:
    """Everything one reply depends on (a backend's only input)."""

    scenario: UserScenario
    persona: Persona
    history: Sequence[MsTodTurn]
    asked_slots: Sequence[str]
    turn_index: int
    open_slots: Sequence[str] = field(default_factory=tuple)


@runtime_checkable
class SimulatorBackend(Protocol):
    """A ``user_simulator`` judge: local templates or an LLM."""

    name: str

    def reply(self, request: SimulationRequest) -> SimulatedTurn:
        """The user's next message."""
        ...


def stable_seed(*parts: object) -> int:
    """A 64-bit seed from JSON-able parts (``hash()`` is salted per process; a digest is not)."""
    key = json.dumps(list(parts))
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big")
