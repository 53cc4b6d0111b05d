"""State of the goal-tracking graph (ATOD, paper 000, §5): utterances in, goals and costs out.

Kept below ``graphs/`` so the nodes can import their own state types (imports point down).
"""

from __future__ import annotations

from typing import Any, NotRequired

from typing_extensions import TypedDict


class GoalTrackingInput(TypedDict):
    """New utterances of one dialogue: ``[{"speaker": "USER"|"SYSTEM", "text": ...}]``.

    A system utterance of a tool-using agent may add ``"actions"``: the calls it made, each
    ``{"tool", "arguments", "error", "result"}`` (:mod:`nodes.goal_tracking.evidence`).
    """

    dialogue_id: str
    utterances: list[dict[str, Any]]
    final: NotRequired[bool]


class GoalTrackingOutput(TypedDict):
    """The goal memory after the last utterance, per-utterance records, and the final judgements."""

    dialogue_id: str
    goals: list[dict[str, Any]]
    turns: list[dict[str, Any]]
    costs: list[dict[str, Any]]
    queries: list[dict[str, Any]]
    proactivity_verdicts: NotRequired[list[bool | None]]
    """The final call's: one verdict per proactive action (``judge_dialogue``)."""
    proactive_actions: NotRequired[list[dict[str, Any]]]
    """The final call's: the proactive actions, each with its verdict."""
    response_quality: NotRequired[dict[str, Any]]
    """The final call's: ``turn_level``, ``dialogue_level`` (None when not judged), ``reason``."""


class GoalTrackingState(GoalTrackingInput, GoalTrackingOutput, total=False):
    """Everything the graph's nodes read and write."""

    history: list[dict[str, Any]]
    cursor: int
    candidates: list[dict[str, Any]]
    turn_ms: float
    turn_cost: dict[str, int]
    audited_final: bool
    claims: dict[str, int]
    """Goal id -> the turn its success was claimed without evidence (tool-using transcripts)."""
    baseline_memory: dict[str, Any]
    """A baseline tracker's own memory (summary, memos, strengths) and its last answer."""
