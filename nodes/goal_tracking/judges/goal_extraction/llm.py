"""LLM judges of the goal tracker (paper 000, §5.2), batched to one or two calls per utterance.

* :class:`LLMTurnUpdater` - Stages 0-2 in one call (:data:`TURN_UPDATE_PROMPT`): the goals an
  utterance raises, continues or settles, each matched to a goal in memory (or new) with a
  confidence, and its status after the utterance.
* :class:`LLMGraphEvolver` - Stage 3 (:data:`GRAPH_EVOLUTION_PROMPT`), only when a goal is
  inserted.
* :class:`LLMAuditor` - Stage 4 (:data:`AUDIT_PROMPT`), every ``audit_every`` utterances.

:class:`LLMGoalTracking`, the three for one spec, is the goal-extraction role's LLM judge.

Each prompt is bounded: the last few utterances and the goals the caller retrieved (top-k), never
the whole dialogue (the contrast is :mod:`nodes.goal_tracking.baselines.full_context`). A failed
call gives an empty answer with a reason, never a guess. Each invocation's tokens are kept as a
:class:`~nodes.judges.costed.CallRecord` for the tracker's cost records (and still reach the
process-wide accounting).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, Field, field_validator, model_validator

from todeval.evals.datasets.sgd_schema import ServiceSchema
from todeval.evals.goal_tracking_schema import TRACKED_STATUSES, normalise_status
from todeval.nodes.goal_tracking.judges.goal_extraction import CONTEXT_UTTERANCES, Utterance
from todeval.nodes.judges.costed import CallRecord, CostedJudge
from todeval.nodes.judges.spec import JudgeSpec
from todeval.nodes.prompts.goal_tracking import (
    AUDIT_PROMPT,
    GOAL_TRACKER_SYSTEM_PROMPT,
    GRAPH_EVOLUTION_PROMPT,
    TURN_UPDATE_PROMPT,
)
from todeval.stores.goal_memory import Goal

TrackedStatus = Literal["open", "pending", "completed", "failed", "abandoned"]
"""A status the tracker may give a goal (``TRACKED_STATUSES``; never ``not_mentioned``)."""
_Status = Annotated[TrackedStatus, BeforeValidator(normalise_status)]
_Text = Annotated[
    str, BeforeValidator(lambda v: "" if v is None else v.strip() if isinstance(v, str) else v)
]
STATUSES = ", ".join(TRACKED_STATUSES)
"""The prompts' ``{statuses}`` field."""
_NULL_IDS = {"", "null", "none", "new", "n/a", "-"}


# -- structured outputs ----------------------------------------------------------------------


class JudgedGoal(BaseModel):
    """A goal as an LLM judge names it, with its status."""

    description: _Text = Field(min_length=1, description="The goal in words, e.g. 'book Sino'.")
    service: _Text = Field(default="", description="Schema service, e.g. Restaurants_2, or ''.")
    intent: _Text = Field(default="", description="Schema intent, e.g. ReserveRestaurant, or ''.")
    status: _Status = Field(description=f"The goal's status now, one of: {STATUSES}.")


class GoalUpdate(JudgedGoal):
    """One goal of a turn update: what it is, which goal in memory it is, its new status."""

    slots: dict[str, str] = Field(
        default_factory=dict, description="Slot values the dialogue has stated for the goal."
    )
    memory_id: str | None = Field(
        default=None, description="Id of the goal in memory this one is (e.g. g1); null if new."
    )
    confidence: float | None = Field(
        default=None, ge=0.0, le=1.0, description="Confidence 0-1 that memory_id is right."
    )

    @field_validator("slots", mode="before")
    @classmethod
    def _slots(cls, value: object) -> object:
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            return value
        return {
            str(name): item if isinstance(item, str) else json.dumps(item)
            for name, item in value.items()
            if item not in (None, "")
        }

    @field_validator("memory_id", mode="before")
    @classmethod
    def _memory_id(cls, value: object) -> object:
        if value is None or str(value).strip().lower() in _NULL_IDS:
            return None
        return str(value).strip()

    @model_validator(mode="after")
    def _confidence_with_match(self) -> GoalUpdate:
        if self.memory_id is not None and self.confidence is None:
            raise ValueError(f"give a confidence for memory_id {self.memory_id!r}")
        return self

    def matched(self, tau: float) -> str | None:
        """The goal in memory this one updates (confidence >= ``tau``), else None (insert)."""
        confident = self.confidence is not None and self.confidence >= tau
        return self.memory_id if confident else None


class TurnUpdateOutput(BaseModel):
    """The turn-update JSON."""

    goals: list[GoalUpdate] = Field(description="The goals the utterance concerns; [] if none.")


class Link(BaseModel):
    """One link of a new goal (graph evolution)."""

    goal_id: str = Field(min_length=1, description="The existing goal it is related to.")
    relation: float = Field(ge=0.0, le=1.0, description="How strongly they belong together.")
    depends_on: bool = Field(default=False, description="True if the new goal needs it first.")


class LinksOutput(BaseModel):
    """The graph-evolution JSON."""

    links: list[Link] = Field(description="Related existing goals; [] if none.")


class AuditUpdate(BaseModel):
    """One out-of-date goal found by the audit."""

    goal_id: str = Field(min_length=1, description="The goal whose status is out of date.")
    status: _Status = Field(description=f"Its correct status, one of: {STATUSES}.")
    evidence: _Text = Field(default="", description="What was said that shows it.")


class AuditOutput(BaseModel):
    """The audit JSON."""

    updates: list[AuditUpdate] = Field(description="Goals whose status is out of date.")


# -- the judges --------------------------------------------------------------------------------


@dataclass(frozen=True)
class TurnUpdate:
    """The turn update of one utterance (``notes``: corrected answers, e.g. an unknown id)."""

    goals: tuple[GoalUpdate, ...]
    call: CallRecord
    notes: tuple[str, ...] = ()

    @property
    def reason(self) -> str | None:
        """Why the update is empty because the judge failed; None when it answered."""
        return self.call.reason


class LLMTurnUpdater(CostedJudge[TurnUpdateOutput]):
    """Goal extraction, existence check and status in one call per utterance."""

    system_prompt = GOAL_TRACKER_SYSTEM_PROMPT

    def __init__(
        self, spec: str | JudgeSpec, *, context_window: int = CONTEXT_UTTERANCES, **kwargs: Any
    ) -> None:
        super().__init__("goal_turn_update", spec, TURN_UPDATE_PROMPT, TurnUpdateOutput, **kwargs)
        self.context_window = context_window

    def update(
        self,
        utterance: Utterance,
        context: Sequence[Utterance],
        memory_goals: Sequence[Goal],
        schema_text: str = "none",
    ) -> TurnUpdate:
        """The goals ``utterance`` raises, continues or settles; empty with a reason on failure.

        Only the last ``context_window`` utterances of ``context`` are shown; ``memory_goals``
        are the goals retrieved for it (top-k neighbours, live goals).
        """
        value, call = self.ask(
            {
                "statuses": STATUSES,
                "schema": schema_text,
                "goals": render_goals(memory_goals),
                "context": render_context(context, self.context_window),
                "speaker": utterance.speaker,
                "utterance": utterance.text,
            }
        )
        if value is None:
            return TurnUpdate((), call)
        known = {goal.id for goal in memory_goals}
        goals, notes = [], []
        for goal in value.goals:
            if goal.memory_id is not None and goal.memory_id not in known:
                notes.append(f"{goal.memory_id} is not among the goals shown; read as a new goal")
                goal = goal.model_copy(update={"memory_id": None, "confidence": None})
            goals.append(goal)
        return TurnUpdate(tuple(goals), call, tuple(notes))


class LLMGraphEvolver(CostedJudge[LinksOutput]):
    """Links of a newly inserted goal to the goals in memory (Stage 3)."""

    system_prompt = GOAL_TRACKER_SYSTEM_PROMPT

    def __init__(self, spec: str | JudgeSpec, **kwargs: Any) -> None:
        super().__init__(
            "goal_graph_evolution", spec, GRAPH_EVOLUTION_PROMPT, LinksOutput, **kwargs
        )

    def links(
        self, new_goal: Goal, goals: Sequence[Goal], *, delta: float = 0.0
    ) -> list[tuple[str, float, bool]]:
        """``(goal id, relation, new goal depends on it)`` for each related goal.

        A link is kept when its relation is at least ``delta`` or it is a dependency; links to
        unknown goals or to the new goal itself are dropped. No other goal: no call. A failed
        call gives ``[]`` (see :attr:`last`).
        """
        others = [goal for goal in goals if goal.id != new_goal.id]
        if not others:
            self.skip()
            return []
        value, _ = self.ask({"new_goal": render_goals([new_goal]), "goals": render_goals(others)})
        known = {goal.id for goal in others}
        links: dict[str, tuple[str, float, bool]] = {}
        for link in value.links if value is not None else []:
            if link.goal_id in known and link.goal_id not in links:
                if link.relation >= delta or link.depends_on:
                    links[link.goal_id] = (link.goal_id, link.relation, link.depends_on)
        return list(links.values())


class LLMAuditor(CostedJudge[AuditOutput]):
    """Proactive audit of the open and pending goals (Stage 4)."""

    system_prompt = GOAL_TRACKER_SYSTEM_PROMPT

    def __init__(
        self, spec: str | JudgeSpec, *, context_window: int | None = 12, **kwargs: Any
    ) -> None:
        super().__init__("goal_audit", spec, AUDIT_PROMPT, AuditOutput, **kwargs)
        self.context_window = context_window

    def audit(
        self, goals: Sequence[Goal], context: Sequence[Utterance]
    ) -> list[tuple[str, TrackedStatus, str]]:
        """``(goal id, status, evidence)`` for each live goal whose status is out of date.

        Only open and pending goals are shown and may change; no live goal: no call. A failed
        call gives ``[]`` (see :attr:`last`).
        """
        live = {goal.id: goal for goal in goals if goal.status in ("open", "pending")}
        if not live:
            self.skip()
            return []
        value, _ = self.ask(
            {
                "statuses": STATUSES,
                "goals": render_goals(list(live.values())),
                "context": render_context(context, self.context_window),
            }
        )
        updates: dict[str, tuple[str, TrackedStatus, str]] = {}
        for item in value.updates if value is not None else []:
            goal = live.get(item.goal_id)
            if goal is not None and item.status != goal.status and item.goal_id not in updates:
                updates[item.goal_id] = (item.goal_id, item.status, item.evidence)
        return list(updates.values())


class LLMGoalTracking:
    """The goal-extraction role's LLM judge: the tracker's three LLM judges for one spec."""

    def __init__(self, role: object, spec: str | JudgeSpec, **kwargs: Any) -> None:
        self.updater = LLMTurnUpdater(spec, **kwargs)
        self.evolver = LLMGraphEvolver(spec, **kwargs)
        self.auditor = LLMAuditor(spec, **kwargs)
        self.name = self.updater.name


# -- rendering ---------------------------------------------------------------------------------


def render_goals(goals: Sequence[Goal]) -> str:
    """One line per goal: ``g1 [open] Restaurants_2.ReserveRestaurant: book Sino | slots: ...``."""
    lines = []
    for goal in goals:
        name = ".".join(part for part in (goal.domain, goal.intent) if part)
        line = f"{goal.id} [{goal.status}] {name + ': ' if name else ''}{goal.description}"
        if goal.slots:
            line += " | slots: " + ", ".join(f"{k}={v}" for k, v in goal.slots.items())
        if goal.dependencies:
            line += " | after: " + ", ".join(goal.dependencies)
        lines.append(line)
    return "\n".join(lines) or "none"


def render_context(utterances: Sequence[Utterance], last_n: int | None = None) -> str:
    """The last ``last_n`` utterances (all if None), one per line as ``SPEAKER: text``."""
    shown = utterances if last_n is None else utterances[max(0, len(utterances) - last_n) :]
    return "\n".join(f"{u.speaker}: {' '.join(u.text.split())}" for u in shown) or "none"


def render_schema(schema: Mapping[str, ServiceSchema] | None) -> str:
    """One line per intent, ``service: intent — description``; ``"none"`` without a schema."""
    lines = [
        f"{service.service_name}: {intent.name} — {intent.description}".rstrip(" —")
        for service in (schema or {}).values()
        for intent in service.intents
    ]
    return "\n".join(lines) or "none"
