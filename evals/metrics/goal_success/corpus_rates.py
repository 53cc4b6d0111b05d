"""Goal Success Rate over a corpus (paper 004, Section 7, Table 1) and the counts behind it.

:func:`gsr_report` and :func:`turn_report` pool scored goals and voted turns
(:mod:`evals.metrics.goal_success.success_rate`); :class:`GoalCounts` and :class:`TurnCounts`
are the same figures counted one goal or turn at a time, so a run keeps counts, not goals.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from todeval.evals.metrics.goal_success.success_rate import (
    LENGTH_BUCKETS,
    UNDECIDED_REASONS,
    Record,
    length_bucket,
    undecided_reason,
)
from todeval.evals.metrics.running import RunningMean
from todeval.evals.schema import RCOF_CODES


def gsr_report(goals: Iterable[Record]) -> dict[str, Any]:
    """Corpus GSR with the paper's breakdowns (Section 7, Table 1) and footnote 1's variants.

    Every goal is counted, decided or not. ``rcof_share`` and ``rcof_unattributed`` add up to
    all failed goals; ``gsr_bounds`` is the GSR if every undecided goal failed or succeeded
    (``gsr`` leaves them out, which is optimistic when they hide failures). Rates are rounded
    to 4 decimals, ``None`` over nothing.

    Raises:
        ValueError: A failed goal has a code that is not one of E1..E7.
    """
    counts = GoalCounts()
    for goal in goals:
        counts.add(goal)
    return counts.report()


def turn_report(turns: Iterable[Record]) -> dict[str, Any]:
    """Counts over voted turns: judged, failed, ambiguous, unresolved and who decided them."""
    counts = TurnCounts()
    for turn in turns:
        counts.add(turn)
    return counts.report()


@dataclass
class _Rate:
    """Goals, decided goals and succeeded goals of one group (all, single-turn, a length)."""

    n: int = 0
    decided: int = 0
    succeeded: int = 0

    def add(self, success: bool | None) -> None:
        self.n += 1
        self.decided += success is not None
        self.succeeded += success is True

    def merge(self, other: _Rate) -> None:
        self.n += other.n
        self.decided += other.decided
        self.succeeded += other.succeeded

    def gsr(self) -> float | None:
        return self.succeeded / self.decided if self.decided else None


@dataclass
class GoalCounts:
    """What :func:`gsr_report` reads from scored goals, counted one goal at a time."""

    every: _Rate = field(default_factory=_Rate)
    single: _Rate = field(default_factory=_Rate)
    multi: _Rate = field(default_factory=_Rate)
    by_length: dict[str, _Rate] = field(
        default_factory=lambda: {bucket: _Rate() for bucket in LENGTH_BUCKETS}
    )
    failed: int = 0
    codes: Counter[str] = field(default_factory=Counter)
    credit: RunningMean = field(default_factory=RunningMean)
    last_turns: _Rate = field(default_factory=_Rate)
    """``decided``/``succeeded``: goals whose last turn is decided / succeeded."""
    undecided_reasons: Counter[str] = field(default_factory=Counter)

    def add(self, goal: Record) -> None:
        """Count one goal (a :func:`score_goals` score or a goals.jsonl line)."""
        success = goal["success"]
        self.every.add(success)
        if goal["n_turns"] == 1:
            self.single.add(success)
        if goal["n_turns"] >= 2:
            self.multi.add(success)
        self.by_length[length_bucket(goal)].add(success)
        if success is False:
            self.failed += 1
            if goal["rcof"] is not None:
                self.codes[goal["rcof"]] += 1
        if goal["fractional_credit"] is not None:
            self.credit.add(goal["fractional_credit"])
        self.last_turns.add(goal["last_turn_success"])
        if success is None:
            reason = goal.get("undecided_reason") or undecided_reason(goal)
            self.undecided_reasons[str(reason)] += 1

    def merge(self, other: GoalCounts) -> None:
        """Add the goals ``other`` counted."""
        for mine, theirs in (
            (self.every, other.every), (self.single, other.single),
            (self.multi, other.multi), (self.last_turns, other.last_turns),
        ):  # fmt: skip
            mine.merge(theirs)
        for bucket, rate in other.by_length.items():
            self.by_length[bucket].merge(rate)
        self.failed += other.failed
        self.codes.update(other.codes)
        self.credit.merge(other.credit)
        self.undecided_reasons.update(other.undecided_reasons)

    def report(self) -> dict[str, Any]:
        """:func:`gsr_report` of the goals counted.

        Raises:
            ValueError: A failed goal has a code that is not one of E1..E7.
        """
        codes, failed, n = self.codes, self.failed, self.every.n
        unknown = sorted(set(codes) - set(RCOF_CODES))
        if unknown:
            raise ValueError(f"unknown RCOF code(s) {unknown}; expected one of {list(RCOF_CODES)}")
        succeeded, undecided = self.every.succeeded, n - self.every.decided
        last = self.last_turns
        last_share = last.succeeded / last.decided if last.decided else None
        return {
            "gsr": _round(self.every.gsr()),
            "gsr_single_turn": _round(self.single.gsr()),
            "gsr_multi_turn": _round(self.multi.gsr()),
            "n_goals": n,
            "n_single_turn_goals": self.single.n,
            "n_multi_turn_goals": self.multi.n,
            "undecided_goals": undecided,
            "undecided_goals_by_reason": {
                reason: self.undecided_reasons[reason]
                for reason in UNDECIDED_REASONS
                if self.undecided_reasons[reason]
            },
            "gsr_bounds": {
                "lower": _round(succeeded / n) if n else None,
                "upper": _round((succeeded + undecided) / n) if n else None,
            },
            "gsr_by_length": {
                bucket: {"n": rate.n, "gsr": _round(rate.gsr())}
                for bucket, rate in self.by_length.items()
            },
            "fractional_credit": _round(self.credit.value()),
            "last_turn_success_rate": _round(last_share),
            "failed_goals": failed,
            "rcof": {code: codes[code] for code in RCOF_CODES},
            "rcof_share": {
                code: _round(codes[code] / failed) if failed else None for code in RCOF_CODES
            },
            "rcof_unattributed": failed - sum(codes.values()),
        }


@dataclass
class TurnCounts:
    """What :func:`turn_report` reads from voted turns, counted one turn at a time."""

    n: int = 0
    judged: int = 0
    failed: int = 0
    ambiguous: int = 0
    unresolved: int = 0
    deciders: Counter[str] = field(default_factory=Counter)

    def add(self, turn: Record) -> None:
        """Count one voted turn."""
        self.n += 1
        self.judged += turn["quality"] is not None
        self.failed += turn["quality"] == "failure"
        if turn["ambiguous"]:
            self.ambiguous += 1
            self.unresolved += turn["decided_by"] != "human"
        self.deciders[turn["decided_by"] or "undecided"] += 1

    def merge(self, other: TurnCounts) -> None:
        """Add the turns ``other`` counted."""
        self.n += other.n
        self.judged += other.judged
        self.failed += other.failed
        self.ambiguous += other.ambiguous
        self.unresolved += other.unresolved
        self.deciders.update(other.deciders)

    def report(self) -> dict[str, Any]:
        """:func:`turn_report` of the turns counted."""
        deciders = self.deciders
        return {
            "n_turns": self.n,
            "judged_turns": self.judged,
            "failed_turns": self.failed,
            "ambiguous": self.ambiguous,
            "ambiguous_share": _round(self.ambiguous / self.n) if self.n else None,
            "unresolved": self.unresolved,
            "decided_by": {
                key: deciders[key]
                for key in ("vote", "certain_evidence", "single_teacher", "human", "undecided")
            }
            | dict(deciders),
        }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)
