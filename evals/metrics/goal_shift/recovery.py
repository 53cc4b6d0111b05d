"""Goal-Shift Recovery Turns (paper 002, Section 4.3): per shift and aggregated.

For the s-th user shift at turn tau_s, ack_s, tool_s and outcome_s are the first agent turns
after tau_s that acknowledge the new goal, call a tool relevant to it, and achieve it, minus
tau_s; a missing event is infinite (``None`` here). A shift is recovered iff it is acknowledged
and the agent did not transfer the user to a human. The recovery rate is the share of recovered
shifts; tool use and outcome are measured but do not decide recovery.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from typing import Any

from typing_extensions import TypedDict  # pydantic (server schemas) needs it on 3.11

from todeval.evals.goal_shift_schema import ShiftJudgment


class ShiftRecovery(TypedDict):
    """One shift with its recovery latencies (turns after the shift; None = never)."""

    turn: int
    from_goal: str | None
    to_goal: str | None
    acknowledgment_turn: int | None
    tool_turn: int | None
    outcome_turn: int | None
    ack: int | None
    tool: int | None
    outcome: int | None
    transferred_to_human: bool
    recovered: bool


def _latency(event_turn: int | None, shift_turn: int) -> int | None:
    """Turns from the shift to the event; an event at or before the shift is no event."""
    if event_turn is None or event_turn <= shift_turn:
        return None
    return event_turn - shift_turn


def shift_recovery(shift: ShiftJudgment) -> ShiftRecovery:
    """GSRT's three latencies and the recovery verdict of one shift."""
    ack = _latency(shift.acknowledgment_turn, shift.turn)
    return ShiftRecovery(
        turn=shift.turn,
        from_goal=shift.from_goal,
        to_goal=shift.to_goal,
        acknowledgment_turn=shift.acknowledgment_turn,
        tool_turn=shift.tool_turn,
        outcome_turn=shift.outcome_turn,
        ack=ack,
        tool=_latency(shift.tool_turn, shift.turn),
        outcome=_latency(shift.outcome_turn, shift.turn),
        transferred_to_human=shift.transferred_to_human,
        recovered=ack is not None and not shift.transferred_to_human,
    )


def _median(values: list[int]) -> float | None:
    return float(statistics.median(values)) if values else None


def goal_shift_recovery_time(shifts: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Aggregate GSRT over shifts: counts, rates and median ack, tool and outcome turns."""
    items = list(shifts)
    n = len(items)
    recovered = sum(1 for s in items if s["recovered"])
    transferred = sum(1 for s in items if s["transferred_to_human"])
    return {
        "shifts": n,
        "recovered": recovered,
        "transferred": transferred,
        "recovery_rate": recovered / n if n else None,
        "transfer_rate": transferred / n if n else None,
        "median_ack": _median([s["ack"] for s in items if s["ack"] is not None]),
        "median_tool": _median([s["tool"] for s in items if s["tool"] is not None]),
        "median_outcome": _median([s["outcome"] for s in items if s["outcome"] is not None]),
    }
