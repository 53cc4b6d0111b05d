"""Data contracts for goal tracking (ATOD, paper 000): annotated dialogues and goal lifecycles.

The shape follows ATOD's Listings 1 and 2: a ``goal_list`` of goals (intent, slots, slot values,
dependencies) and ``turns``, one per utterance, each with the status changes it causes and the
status of every goal after it (``all_goals``). Statuses are lower case, as in Listing 2;
``not_mentioned`` is only ever a gold label (the tracker's memory holds mentioned goals only).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

GoalStatus = Literal["not_mentioned", "open", "pending", "completed", "failed", "abandoned"]
"""A goal's lifecycle state (paper 000, §4.4 and §5.1)."""

TRACKED_STATUSES: tuple[GoalStatus, ...] = ("open", "pending", "completed", "failed", "abandoned")
"""The statuses a goal in memory can have (D_sym, §5.1)."""

DECIDED_STATUSES: tuple[GoalStatus, ...] = ("completed", "failed")
"""The statuses dGCR counts (U_dec, §6.1)."""

VALID_TRANSITIONS: dict[GoalStatus, frozenset[GoalStatus]] = {
    "not_mentioned": frozenset({"open", "pending", "completed", "failed"}),
    "open": frozenset({"pending", "completed", "failed", "abandoned"}),
    "pending": frozenset({"open", "completed", "failed", "abandoned"}),
    "failed": frozenset({"open"}),  # the user tries again
    "abandoned": frozenset({"open", "pending"}),  # the user comes back to it
    "completed": frozenset(),  # terminal
}
"""Allowed lifecycle moves. Staying in the same status is always allowed (a no-op); anything
else is rejected by the goal memory and logged. ``not_mentioned`` may jump straight to an
outcome because a goal can be raised and settled within one utterance."""


_CANONICAL_STATUSES = frozenset(get_args(GoalStatus))


def normalise_status(value: object) -> object:
    """``"Open"``, ``"NOT_MENTIONED"``, ``"not mentioned"`` -> the canonical lower-case name."""
    if isinstance(value, str) and value not in _CANONICAL_STATUSES:  # most already are
        return value.strip().lower().replace(" ", "_").replace("-", "_")
    return value


def _all_canonical(statuses: Iterable[object]) -> bool:
    """Whether every status already has its canonical name (nothing to normalise)."""
    try:
        return _CANONICAL_STATUSES.issuperset(statuses)
    except TypeError:  # an unhashable value: normalised (or refused) one by one
        return False


class AtodGoal(BaseModel):
    """One goal of ``goal_list`` (Listing 1). Unknown fields are kept."""

    model_config = ConfigDict(extra="allow")

    id: str = Field(description="The goal's id within its dialogue, e.g. ``g1``.")
    domain: str = Field(default="", description="Domain or service, e.g. ``Hotels_1``.")
    intent: str = Field(default="", description="Intent, e.g. ``ReserveHotel``.")
    slots: list[str] = Field(default_factory=list, description="Slot names the goal needs.")
    slot_values: dict[str, Any] = Field(default_factory=dict, description="Slot -> value.")
    dependencies: list[str] = Field(
        default_factory=list, description="Ids of goals that must complete before this one."
    )
    content: str = Field(default="", description="The goal in words.")
    core_content: str = Field(default="", description="A short form of ``content``.")
    confirmed: Literal["completed", "failed"] | None = Field(
        default=None,
        description=(
            "The outcome the dialogue itself confirms (a system NOTIFY_SUCCESS or "
            "NOTIFY_FAILURE for the goal), when the gold source records one; None otherwise."
        ),
    )


class StatusChange(BaseModel):
    """A goal status change caused by one utterance."""

    goal_id: str = Field(description="The goal that changed.")
    new_status: GoalStatus = Field(description="Its status after the utterance.")

    @field_validator("new_status", mode="before")
    @classmethod
    def _status(cls, value: object) -> object:
        return normalise_status(value)


_SYSTEM_NAMES = {"ASSISTANT": "SYSTEM", "AGENT": "SYSTEM", "BOT": "SYSTEM"}
"""Other names of the system speaker an annotation may use."""


class AtodTurn(BaseModel):
    """One utterance with its gold goal annotations (Listing 2)."""

    model_config = ConfigDict(extra="allow")

    turn_id: int = Field(ge=1, description="1-based index of the utterance.")
    speaker: Literal["USER", "SYSTEM"] = Field(description="Who spoke.")
    utterance: str = Field(description="What was said.")
    goal_status_changes: list[StatusChange] = Field(
        default_factory=list, description="Status changes this utterance causes."
    )
    all_goals: dict[str, GoalStatus] = Field(
        default_factory=dict, description="Every goal's status after this utterance."
    )

    @field_validator("speaker", mode="before")
    @classmethod
    def _speaker(cls, value: object) -> object:
        if isinstance(value, str) and value not in ("USER", "SYSTEM"):  # most already are
            upper = value.strip().upper()
            return _SYSTEM_NAMES.get(upper, upper)
        return value

    @field_validator("all_goals", mode="before")
    @classmethod
    def _statuses(cls, value: object) -> object:
        if isinstance(value, dict) and not _all_canonical(value.values()):
            return {key: normalise_status(status) for key, status in value.items()}
        return value


class AtodDialogue(BaseModel):
    """An ATOD-annotated dialogue: its goals and its utterances with turn-level statuses."""

    model_config = ConfigDict(extra="allow")

    dialogue_id: str = Field(min_length=1, description="Unique id of the dialogue.")
    complexity_class: str | None = Field(default=None, description="``medium`` or ``complex``.")
    metadata: dict[str, Any] = Field(default_factory=dict, description="Listing 1 metadata.")
    goal_list: list[AtodGoal] = Field(default_factory=list, description="The gold goals.")
    turns: list[AtodTurn] = Field(min_length=1, description="The utterances, in order.")

    @model_validator(mode="after")
    def _consistent(self) -> AtodDialogue:
        numbers = [turn.turn_id for turn in self.turns]
        if numbers != list(range(1, len(numbers) + 1)):
            raise ValueError(f"turn_id must run 1..{len(numbers)} in order, got {numbers}")
        known = {goal.id for goal in self.goal_list}
        for turn in self.turns if known else ():
            changes = turn.goal_status_changes
            if not known.issuperset(turn.all_goals) or (
                changes and not known.issuperset(c.goal_id for c in changes)
            ):
                unknown = {c.goal_id for c in turn.goal_status_changes} | set(turn.all_goals)
                raise ValueError(
                    f"turn {turn.turn_id} names goals not in goal_list: {sorted(unknown - known)}"
                )
        return self

    def final_statuses(self) -> dict[str, GoalStatus]:
        """Each goal's gold status after the last utterance (``not_mentioned`` if never set)."""
        statuses: dict[str, GoalStatus] = {goal.id: "not_mentioned" for goal in self.goal_list}
        for turn in self.turns:
            statuses.update(turn.all_goals)
            statuses.update({c.goal_id: c.new_status for c in turn.goal_status_changes})
        return statuses
