"""State of the goal-shift graph (AgentChangeBench, paper 002): one conversation's scores.

Kept below ``graphs/`` so the nodes can import their own state types (imports point down).
"""

from __future__ import annotations

from typing import Any, NotRequired

from typing_extensions import TypedDict

from todeval.evals.metrics.goal_shift.recovery import ShiftRecovery
from todeval.evals.metrics.goal_shift.tool_use import ToolCallRecord


class GoalShiftInput(TypedDict):
    """A conversation (``Conversation.model_dump(mode="json")``) and the tool schemas."""

    conversation: dict[str, Any]
    tool_schemas: NotRequired[dict[str, dict[str, Any]] | None]


class GoalShiftOutput(TypedDict):
    """One conversation's figures; rates are None when they cannot be computed."""

    dialogue_id: str
    task_id: str
    trial: int
    domain: str | None
    persona: str | None
    goal_sequence: str
    reward: float | None
    tsr: float | None
    tsr_channels: dict[str, float | None]
    tsr_weights: dict[str, float]
    action_upstream: NotRequired[float | None]
    """The action channel by AgentChangeBench's code (half for the right tool, any arguments)."""
    nl_assertions: list[dict[str, Any]]
    nl_assertions_total: NotRequired[int]
    """The task's assertions (upstream's nl_assertion denominator)."""
    nl_judge: NotRequired[str | None]
    tool_calls: list[ToolCallRecord]
    tue: float | None
    tool_correctness: float | None
    param_validity: float | None
    num_tool_calls: int
    tcrr: float | None
    tcrr_window: float | None
    tcrr_batch: float | None
    num_redundant: int
    shifts: list[ShiftRecovery]
    shift_judge: str
    shift_reason: str | None
    shifts_judged: NotRequired[bool]
    gsrt: dict[str, Any]
    issues: list[dict[str, Any]]


class GoalShiftState(GoalShiftInput, GoalShiftOutput, total=False):
    """Everything the graph's nodes read and write."""
