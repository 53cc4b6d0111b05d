"""Goal Success Rate and Root Cause of Failure (paper 004, Sections 4.2-4.3, Table 1).

A goal is a span of turns; every turn carries a voted ``quality`` (``None`` while undecided)
and, when it failed, an ``rcof`` code E1..E7. A goal succeeds only if *every* turn succeeds; a
failed goal's root cause is its *earliest failed turn*'s code. Footnote 1's fractional credit
and last-turn success are reported beside it. Undecided turns are never guessed: rates are over
what was decided. Fractions in [0, 1] (the paper prints percentages).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

Record = Mapping[str, Any]
"""A voted turn, a goal score or a reference label, as the data contract spells them."""

QUALITIES = ("success", "failure")
LENGTH_BUCKETS = ("1", "2", "3", "4+")
"""Goal lengths in turns that ``gsr_report`` breaks GSR down by."""


def goal_quality(qualities: Sequence[str | None]) -> str | None:
    """goalQuality: ``failure`` if any turn failed, ``success`` if all succeeded; else None.

    Raises:
        ValueError: A quality is neither ``success``, ``failure`` nor ``None``.
    """
    for quality in qualities:
        if quality is not None and quality not in QUALITIES:
            raise ValueError(f"turn quality must be 'success', 'failure' or None, got {quality!r}")
    if "failure" in qualities:
        return "failure"
    if qualities and all(quality == "success" for quality in qualities):
        return "success"
    return None


def earliest_failed_turn(turns: Sequence[Record]) -> Record | None:
    """The failed turn with the lowest ``turn_number``, or ``None`` when no turn failed."""
    failed = [turn for turn in turns if turn["quality"] == "failure"]
    return min(failed, key=lambda turn: int(turn["turn_number"])) if failed else None


def root_cause(turns: Sequence[Record]) -> str | None:
    """A goal's RCOF: its earliest failed turn's code (4.3); a later code is not borrowed."""
    turn = earliest_failed_turn(turns)
    return None if turn is None else turn.get("rcof")


def score_goals(spans: Sequence[Record], turns: Sequence[Record]) -> list[dict[str, Any]]:
    """Score every goal span (1-based, inclusive) of a dialogue from its voted turns.

    Per span: ``success`` (strict goalQuality, ``None`` if undecided), ``rcof``, footnote 1's
    ``fractional_credit`` and ``last_turn_success``, and copies of its ``turns``.

    Raises:
        ValueError: Two turns share a number, a span ends before it starts, or a span names a
            turn that is missing.
    """
    by_number: dict[int, Record] = {}
    for turn in turns:
        number = int(turn["turn_number"])
        if number in by_number:
            raise ValueError(f"turn {number} appears more than once")
        by_number[number] = turn
    goals = []
    for span in spans:
        index, start, end = int(span["goal_index"]), int(span["start_turn"]), int(span["end_turn"])
        if end < start:
            raise ValueError(f"goal {index} ends at turn {end} before it starts at turn {start}")
        missing = [number for number in range(start, end + 1) if number not in by_number]
        if missing:
            raise ValueError(
                f"goal {index} spans turns {start}-{end} but turn(s) {missing} are missing "
                f"(the dialogue has turns {sorted(by_number)})"
            )
        members = [dict(by_number[number]) for number in range(start, end + 1)]
        qualities = [turn["quality"] for turn in members]
        judged = [quality for quality in qualities if quality is not None]
        quality = goal_quality(qualities)
        goals.append(
            {
                "goal_index": index,
                "start_turn": start,
                "end_turn": end,
                "n_turns": len(members),
                "success": None if quality is None else quality == "success",
                "rcof": root_cause(members),
                "fractional_credit": judged.count("success") / len(judged) if judged else None,
                "last_turn_success": None if qualities[-1] is None else qualities[-1] == "success",
                "turns": members,
            }
        )
    return goals


def goal_success_rate(goals: Sequence[Record]) -> float | None:
    """GSR: the share of decided goals that succeeded (Section 4.2); None when none is decided."""
    decided = [goal["success"] for goal in goals if goal["success"] is not None]
    return sum(decided) / len(decided) if decided else None


def length_bucket(goal: Record) -> str:
    """The goal's :data:`LENGTH_BUCKETS` entry (4 turns or more share one)."""
    return LENGTH_BUCKETS[min(int(goal["n_turns"]), 4) - 1]


UNDECIDED_REASONS = {
    "disagreement": "teachers disagree and no human has decided",
    "lone_teacher": "only one teacher could judge a turn (the vote needs two to agree)",
    "nobody": "no teacher could judge a turn",
}


def undecided_reason(goal: Record) -> str | None:
    """Why a goal has no success: the first kind of undecided turn it holds (None if decided)."""
    if goal.get("success") is not None:
        return None
    open_turns = [turn for turn in goal.get("turns") or [] if turn.get("quality") is None]
    if any(turn.get("ambiguous") for turn in open_turns):
        return "disagreement"
    if any(turn.get("decided_by") == "undecided" for turn in open_turns):
        return "lone_teacher"
    return "nobody"
