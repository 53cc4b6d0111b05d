"""Goal Success Rate and Root Cause of Failure (paper 004, Sections 4.2-4.3, Table 1).

A goal is a span of turns (from goal segmentation); every turn carries a voted ``quality``
(``success``/``failure``, ``None`` while undecided) and, when it failed, an ``rcof`` code
E1..E7. The paper's metric is strict: a goal succeeds only if *every* turn succeeds, and a failed
goal's root cause is the code of its *earliest failed turn*. Footnote 1's alternate
formulations are reported next to it: fractional credit (share of successful turns) and
last-turn success (the final turn alone).

Undecided turns are never guessed: a goal with an undecided turn and no failure is undecided
(``success`` is ``None``), and every rate is taken over what was decided. The functions here
return fractions in [0, 1]; the paper prints them as percentages (x 100%).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from evals.schema import RCOF_CODES

Record = Mapping[str, Any]
"""A voted turn, a goal score or a reference label, as the data contract spells them."""

QUALITIES = ("success", "failure")
LENGTH_BUCKETS = ("1", "2", "3", "4+")
"""Goal lengths in turns that ``gsr_report`` breaks GSR down by."""


def goal_quality(qualities: Sequence[str | None]) -> str | None:
    """The paper's goalQuality: ``failure`` if any turn failed, ``success`` if all succeeded.

    Args:
        qualities: The turn qualities of one goal, ``None`` for an undecided turn.

    Returns:
        ``failure``, ``success``, or ``None`` when no turn failed but some are undecided (or the
        goal has no turns).

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
    """A goal's RCOF: the code of its earliest failed turn (paper 004, Section 4.3).

    Returns:
        The code, or ``None`` when no turn failed or the earliest failed turn has no code (a
        later turn's code is not borrowed: the paper attributes the goal to the first breakdown).
    """
    turn = earliest_failed_turn(turns)
    return None if turn is None else turn.get("rcof")


def score_goals(spans: Sequence[Record], turns: Sequence[Record]) -> list[dict[str, Any]]:
    """Score every goal span of a dialogue from its voted turns.

    Args:
        spans: ``{"goal_index", "start_turn", "end_turn"}`` per goal (1-based, inclusive).
        turns: The voted turns of the dialogue, each with ``turn_number``, ``quality``, ``rcof``.

    Returns:
        Per span, in the given order: ``goal_index``, ``start_turn``, ``end_turn``, ``n_turns``;
        ``success`` (strict goalQuality as a bool, ``None`` if undecided); ``rcof`` (root cause
        of a failed goal); footnote 1's ``fractional_credit`` (successful / judged turns,
        ``None`` if none judged) and ``last_turn_success`` (``None`` if the last turn is
        undecided); and ``turns``, copies of the span's voted turns in order.

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
    """GSR: the share of decided goals that succeeded (paper 004, Section 4.2).

    The paper writes GSR = (1/K) sum 1[goalQuality(G_k) = success] x 100%; this returns the
    fraction in [0, 1] (multiply by 100 for the paper's percentage). K counts the goals whose
    ``success`` is decided; undecided goals are left out rather than counted as failures.

    Args:
        goals: Goal scores from :func:`score_goals` (only ``success`` is read).

    Returns:
        The fraction, or ``None`` when no goal is decided.
    """
    decided = [goal["success"] for goal in goals if goal["success"] is not None]
    return sum(decided) / len(decided) if decided else None


def gsr_report(goals: Sequence[Record]) -> dict[str, Any]:
    """Corpus GSR with the paper's breakdowns (Section 7, Table 1) and footnote 1's variants.

    Args:
        goals: Goal scores from :func:`score_goals`, of any number of dialogues.

    Returns:
        ``gsr`` overall, ``gsr_single_turn`` and ``gsr_multi_turn`` (goals of one turn and of
        two or more); ``n_goals``, ``n_single_turn_goals``, ``n_multi_turn_goals`` and
        ``undecided_goals`` (all goals are counted, decided or not); ``gsr_by_length``:
        ``{"1"|"2"|"3"|"4+": {"n": goals of that length, "gsr": ...}}``; ``fractional_credit``
        (mean over goals that have one) and ``last_turn_success_rate``; ``failed_goals``;
        ``rcof``: failed goals per root cause, all of E1..E7 listed; ``rcof_share``: each code's
        share of the failed goals (all ``None`` when none failed) and ``rcof_unattributed``,
        failed goals without a code, so that the shares and the unattributed ones add up to all
        failed goals; ``undecided_goals_by_reason``: undecided goals per
        :data:`UNDECIDED_REASONS` key; ``gsr_bounds``: ``{"lower", "upper"}``, the GSR if every
        undecided goal failed or succeeded (``gsr`` leaves them out, which is optimistic when
        undecided goals hide failures). Rates are fractions rounded to 4 decimals, ``None`` over
        nothing.

    Raises:
        ValueError: A failed goal has a code that is not one of E1..E7.
    """
    single = [goal for goal in goals if goal["n_turns"] == 1]
    multi = [goal for goal in goals if goal["n_turns"] >= 2]
    failed = [goal for goal in goals if goal["success"] is False]
    codes = Counter(goal["rcof"] for goal in failed if goal["rcof"] is not None)
    unknown = sorted(set(codes) - set(RCOF_CODES))
    if unknown:
        raise ValueError(f"unknown RCOF code(s) {unknown}; expected one of {list(RCOF_CODES)}")
    by_length = {
        bucket: [goal for goal in goals if _bucket(goal) == bucket] for bucket in LENGTH_BUCKETS
    }
    credits = [goal["fractional_credit"] for goal in goals if goal["fractional_credit"] is not None]
    last_turns = [goal["last_turn_success"] for goal in goals]
    succeeded = sum(goal["success"] is True for goal in goals)
    undecided = sum(goal["success"] is None for goal in goals)
    return {
        "gsr": _round(goal_success_rate(goals)),
        "gsr_single_turn": _round(goal_success_rate(single)),
        "gsr_multi_turn": _round(goal_success_rate(multi)),
        "n_goals": len(goals),
        "n_single_turn_goals": len(single),
        "n_multi_turn_goals": len(multi),
        "undecided_goals": undecided,
        "undecided_goals_by_reason": _undecided_by_reason(goals),
        "gsr_bounds": {
            "lower": _round(succeeded / len(goals)) if goals else None,
            "upper": _round((succeeded + undecided) / len(goals)) if goals else None,
        },
        "gsr_by_length": {
            bucket: {"n": len(members), "gsr": _round(goal_success_rate(members))}
            for bucket, members in by_length.items()
        },
        "fractional_credit": _round(_mean(credits)),
        "last_turn_success_rate": _round(_share(last_turns, True)),
        "failed_goals": len(failed),
        "rcof": {code: codes[code] for code in RCOF_CODES},
        "rcof_share": {
            code: _round(codes[code] / len(failed)) if failed else None for code in RCOF_CODES
        },
        "rcof_unattributed": len(failed) - sum(codes.values()),
    }


def turn_report(turns: Sequence[Record]) -> dict[str, Any]:
    """Counts over voted turns: judged, failed, ambiguous and who decided them.

    Returns:
        ``n_turns``; ``judged_turns`` (quality decided); ``failed_turns``; ``ambiguous``
        (turns the vote flagged ambiguous) and ``ambiguous_share`` of all turns (rounded,
        ``None`` for no turns); ``unresolved`` (ambiguous turns no human has decided: awaiting
        a verdict, or left open when escalation is off); ``decided_by``: turns per ``vote``,
        ``single_teacher``, ``human`` and ``undecided`` (``decided_by`` is ``None``), plus any
        other value met.
    """
    ambiguous = [turn for turn in turns if turn["ambiguous"]]
    deciders = Counter(turn["decided_by"] or "undecided" for turn in turns)
    return {
        "n_turns": len(turns),
        "judged_turns": sum(turn["quality"] is not None for turn in turns),
        "failed_turns": sum(turn["quality"] == "failure" for turn in turns),
        "ambiguous": len(ambiguous),
        "ambiguous_share": _round(len(ambiguous) / len(turns)) if turns else None,
        "unresolved": sum(turn["decided_by"] != "human" for turn in ambiguous),
        "decided_by": {
            key: deciders[key]
            for key in ("vote", "certain_evidence", "single_teacher", "human", "undecided")
        }
        | dict(deciders),
    }


def _undecided_by_reason(goals: Sequence[Record]) -> dict[str, int]:
    """Undecided goals per reason (a goal line carries ``undecided_reason``; else its turns)."""
    reasons = Counter(
        goal.get("undecided_reason") or undecided_reason(goal)
        for goal in goals
        if goal["success"] is None
    )
    return {reason: reasons[reason] for reason in UNDECIDED_REASONS if reasons[reason]}


def _bucket(goal: Record) -> str:
    return LENGTH_BUCKETS[min(int(goal["n_turns"]), 4) - 1]


def _share(values: Sequence[object], target: object) -> float | None:
    """Share of the non-``None`` values equal to ``target``."""
    known = [value for value in values if value is not None]
    return sum(value == target for value in known) / len(known) if known else None


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


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
