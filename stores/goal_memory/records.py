"""The values the goal memory hands out: goals, transition outcomes, rejections, links."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from todeval.evals.goal_tracking_schema import TRACKED_STATUSES, GoalStatus

TransitionOutcome = Literal["applied", "unchanged", "rejected"]
"""What :meth:`GoalMemory.transition` did: moved the goal, found it there already, refused."""


def tracked_status(value: str) -> GoalStatus:
    """``value`` as a status a goal in memory can have.

    Raises:
        ValueError: ``value`` is not one of ``TRACKED_STATUSES``.
    """
    for status in TRACKED_STATUSES:
        if status == value:
            return status
    raise ValueError(f"unknown goal status {value!r}; expected one of {list(TRACKED_STATUSES)}")


@dataclass(frozen=True)
class StatusEntry:
    """One turn-level entry of a goal's ``status_history``."""

    turn: int
    status: GoalStatus

    def to_dict(self) -> dict[str, Any]:
        """``{"turn", "status"}``."""
        return {"turn": self.turn, "status": self.status}


@dataclass(frozen=True)
class Goal:
    """A goal as D_sym holds it (paper 000, §5.1), read at one moment.

    Attributes:
        id: Unique within its dialogue: ``g1``, ``g2``, … in insertion order.
        dialogue_id: The dialogue the goal belongs to.
        status: One of ``open``, ``pending``, ``completed``, ``failed``, ``abandoned``.
        status_history: Every status the goal entered, with the turn it happened at.
        description: The goal in a standard textual form; D_vec embeds it.
        domain: Domain or service, e.g. ``Hotels_1``.
        intent: Intent, e.g. ``ReserveHotel``.
        slots: Slot name -> value (JSON values).
        dependencies: Ids of the goals that must complete before this one (prerequisites).
        parent_id: The goal this one refines, if any.
        created_turn: Turn of insertion.
        updated_turn: Turn of the last change (status or slots).
    """

    id: str
    dialogue_id: str
    status: GoalStatus
    status_history: tuple[StatusEntry, ...]
    description: str
    domain: str = ""
    intent: str = ""
    slots: dict[str, Any] = field(default_factory=dict)
    dependencies: tuple[str, ...] = ()
    parent_id: str | None = None
    created_turn: int = 0
    updated_turn: int = 0

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict; :meth:`from_dict` reads it back to an equal goal."""
        return {
            "id": self.id,
            "dialogue_id": self.dialogue_id,
            "status": self.status,
            "status_history": [entry.to_dict() for entry in self.status_history],
            "description": self.description,
            "domain": self.domain,
            "intent": self.intent,
            "slots": dict(self.slots),
            "dependencies": list(self.dependencies),
            "parent_id": self.parent_id,
            "created_turn": self.created_turn,
            "updated_turn": self.updated_turn,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Goal:
        """The goal :meth:`to_dict` wrote.

        Raises:
            KeyError: A required key is missing.
            ValueError: A status is not one a goal in memory can have.
        """
        return cls(
            id=str(data["id"]),
            dialogue_id=str(data["dialogue_id"]),
            status=tracked_status(data["status"]),
            status_history=tuple(
                StatusEntry(int(entry["turn"]), tracked_status(entry["status"]))
                for entry in data.get("status_history", [])
            ),
            description=str(data["description"]),
            domain=str(data.get("domain", "")),
            intent=str(data.get("intent", "")),
            slots=dict(data.get("slots") or {}),
            dependencies=tuple(str(goal_id) for goal_id in data.get("dependencies", [])),
            parent_id=None if data.get("parent_id") is None else str(data["parent_id"]),
            created_turn=int(data.get("created_turn", 0)),
            updated_turn=int(data.get("updated_turn", 0)),
        )


@dataclass(frozen=True)
class TransitionResult:
    """The outcome of one proposed status change.

    Attributes:
        outcome: ``applied``, ``unchanged`` (the goal had that status already) or ``rejected``.
        goal: The goal after the call (unchanged unless applied); None for an unknown id.
        from_status: The status before the call; None for an unknown id.
        to_status: The proposed status, as given.
        reason: Why it was rejected; None otherwise.
    """

    outcome: TransitionOutcome
    goal: Goal | None
    from_status: str | None
    to_status: str
    reason: str | None = None

    @property
    def applied(self) -> bool:
        """Whether the goal's status changed."""
        return self.outcome == "applied"

    @property
    def rejected(self) -> bool:
        """Whether the proposal was refused (and logged)."""
        return self.outcome == "rejected"


@dataclass(frozen=True)
class RejectedTransition:
    """A logged refusal: who proposed which move, at which turn, and why it was refused."""

    dialogue_id: str
    goal_id: str
    from_status: str | None
    to_status: str
    turn: int
    reason: str
    proposed_by: str


@dataclass(frozen=True)
class LinkResult:
    """The outcome of :meth:`GoalMemory.add_dependency`.

    Attributes:
        added: Whether the edge is in the graph now (a repeated link updates its weight).
        reason: Why it was refused; None when added.
    """

    added: bool
    reason: str | None = None
