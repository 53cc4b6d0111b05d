"""Per-teacher calibration against human verdicts: the review loop of paper 004 (Appendix C).

:func:`teacher_calibration` measures how often each teacher's label matches the human verdict,
overall, per root cause (``success`` or E1-E7, via :func:`turn_outcome`), and on escalated and
audited turns apart. A teacher is flagged on *audited* turns only: escalated turns are the ones
the teachers split on, so agreement there is low by construction. The result is stored as
``calibration.json`` and read by the next run (``--calibration``), where
:func:`applied_calibration` reports each teacher's earlier agreement and counts the votes that
lean on a flagged teacher. The vote itself stays as the paper has it (two teachers agree).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from todeval.evals.metrics.goal_success.teacher_agreement import turn_outcome

CALIBRATION_FILE = "calibration.json"
"""Where a run with human verdicts keeps its calibration (next to ``verdicts.jsonl``)."""

FLAG_BELOW = 0.5
"""A teacher whose outcome agreement with people is below this is flagged."""

MIN_VERDICTS = 3
"""Verdicts a teacher needs before it can be flagged (one overruled turn proves little)."""

AGREEING_TEACHERS = 2
"""Teachers that must agree for the vote to decide (paper 004, §6: "two or more")."""

Record = Mapping[str, Any]


def _share(agreed: int, n: int) -> float | None:
    return round(agreed / n, 4) if n else None


@dataclass
class _Agreement:
    """Verdicts a teacher labelled and how many its outcome agreed with."""

    n: int = 0
    agreed: int = 0

    def add(self, hit: int) -> None:
        self.n += 1
        self.agreed += hit

    def merge(self, other: _Agreement) -> None:
        self.n += other.n
        self.agreed += other.agreed

    def share(self) -> float | None:
        return _share(self.agreed, self.n)


@dataclass
class _TeacherCounts:
    """One teacher against the human verdicts (see :func:`teacher_calibration`)."""

    every: _Agreement = field(default_factory=_Agreement)
    escalated: _Agreement = field(default_factory=_Agreement)
    audited: _Agreement = field(default_factory=_Agreement)
    same_quality: int = 0
    by_cause: dict[str, _Agreement] = field(default_factory=dict)

    def add(self, label: Record, verdict: Record, audited: bool) -> None:
        if label.get("quality") is None:
            return  # the teacher could not judge this turn: nothing to agree with
        human = turn_outcome(verdict["quality"], verdict.get("rcof")) or "unknown"
        hit = int(turn_outcome(label["quality"], label.get("rcof")) == human)
        self.every.add(hit)
        (self.audited if audited else self.escalated).add(hit)
        self.by_cause.setdefault(human, _Agreement()).add(hit)
        self.same_quality += label["quality"] == verdict["quality"]

    def merge(self, other: _TeacherCounts) -> None:
        self.every.merge(other.every)
        self.escalated.merge(other.escalated)
        self.audited.merge(other.audited)
        self.same_quality += other.same_quality
        for cause, counts in other.by_cause.items():
            self.by_cause.setdefault(cause, _Agreement()).merge(counts)

    def row(self, judge: str) -> dict[str, Any]:
        checked, kept = self.audited.n, self.audited.agreed
        audited_agreement = self.audited.share()
        flagged = (
            audited_agreement is not None
            and checked >= MIN_VERDICTS
            and audited_agreement < FLAG_BELOW
        )
        return {
            "judge": judge,
            "n": self.every.n,
            "agreement": self.every.share(),
            "quality_agreement": _share(self.same_quality, self.every.n),
            "escalated": {"n": self.escalated.n, "agreement": self.escalated.share()},
            "audited": {"n": checked, "agreement": audited_agreement},
            "by_root_cause": {
                cause: {"n": c.n, "agreed": c.agreed, "agreement": c.share()}
                for cause, c in sorted(self.by_cause.items())
            },
            "flagged": flagged,
            "flag_reason": (
                f"people overruled {judge} on {checked - kept} of {checked} audited turns "
                f"(agreement {audited_agreement} < {FLAG_BELOW})"
                if flagged
                else None
            ),
        }


@dataclass
class CalibrationCounts:
    """What :func:`teacher_calibration` and :func:`applied_calibration` read, turn by turn.

    Per teacher its agreement with the human verdicts; per vote-decided turn only which judges
    agreed with the vote (:func:`applied_calibration` needs no more), counted by that set.
    """

    judges: list[str] | None = None
    """The panel of the first turn with a verdict (the calibration's teachers)."""
    panel: list[str] | None = None
    """The panel of the first turn (the one an earlier calibration is applied to)."""
    n_verdicts: int = 0
    teachers: list[_TeacherCounts] = field(default_factory=list)
    agreeing: Counter[tuple[str, ...]] = field(default_factory=Counter)
    """Vote-decided turns by the judges that agreed with the vote."""

    def add(self, turn: Record, verdict: Record | None, audited: bool = False) -> None:
        """Count one voted turn with its human verdict (``audited``: from an audit)."""
        if self.panel is None:
            self.panel = [str(label["judge"]) for label in turn["teachers"]]
        if turn.get("decided_by") == "vote":
            vote = turn["quality"]
            teachers = turn["teachers"]
            self.agreeing[tuple(str(t["judge"]) for t in teachers if t.get("quality") == vote)] += 1
        if verdict is None:
            return
        if self.judges is None:
            self.judges = [str(label["judge"]) for label in turn["teachers"]]
            self.teachers = [_TeacherCounts() for _ in self.judges]
        self.n_verdicts += 1
        for index, counts in enumerate(self.teachers):
            counts.add(turn["teachers"][index], verdict, audited)

    def merge(self, other: CalibrationCounts) -> None:
        """Add the turns ``other`` counted (its turns came later)."""
        self.panel = self.panel if self.panel is not None else other.panel
        if self.judges is None:
            self.judges = other.judges
            self.teachers = [_TeacherCounts() for _ in other.teachers]
        self.n_verdicts += other.n_verdicts
        for mine, theirs in zip(self.teachers, other.teachers, strict=False):
            mine.merge(theirs)
        self.agreeing.update(other.agreeing)

    def calibration(self) -> dict[str, Any] | None:
        """:func:`teacher_calibration` of the turns counted."""
        if not self.n_verdicts or self.judges is None:
            return None
        return {
            "n_verdicts": self.n_verdicts,
            "flag_below": FLAG_BELOW,
            "min_verdicts": MIN_VERDICTS,
            "flag_basis": "audited turns only: on escalated turns the teachers split, so at most "
            "a minority can agree with the person",
            "teachers": [
                counts.row(judge) for judge, counts in zip(self.judges, self.teachers, strict=True)
            ],
        }

    def applied(self, prior: Mapping[str, Any], source: str) -> dict[str, Any]:
        """:func:`applied_calibration` of ``prior`` to the turns counted."""
        known = {str(row["judge"]): row for row in prior.get("teachers", [])}
        panel = self.panel or []
        flagged = {judge for judge in panel if (known.get(judge) or {}).get("flagged")}
        leaning = sum(
            count
            for judges, count in self.agreeing.items()
            if len(judges) >= AGREEING_TEACHERS > len([j for j in judges if j not in flagged])
        )
        return {
            "source": source,
            "n_verdicts": prior.get("n_verdicts"),
            "teachers": [
                {"judge": judge}
                | (
                    {key: known[judge].get(key) for key in ("n", "agreement", "by_root_cause")}
                    | {"flagged": bool(known[judge].get("flagged"))}
                    if judge in known
                    else {"n": None, "agreement": None, "by_root_cause": {}, "flagged": False}
                )
                for judge in panel
            ],
            "flagged": sorted(flagged),
            "votes_leaning_on_flagged": leaning,
        }


def teacher_calibration(
    turns: Sequence[Record],
    verdicts: Sequence[Record | None],
    audited: Sequence[bool] | None = None,
) -> dict[str, Any] | None:
    """Each teacher's agreement with the human verdicts, overall and per root cause.

    Args:
        turns: Voted turns, each with its ``teachers`` labels (``judge``, ``quality``, ``rcof``).
        verdicts: The human ``{"quality", "rcof"}`` per turn, or None (aligned with ``turns``).
        audited: Per turn, whether its verdict comes from an audit; default: all escalations.

    Returns:
        None without verdicts; else the counts, the flag settings and per teacher its
        agreements (overall, escalated, audited, by root cause) and ``flagged``.
    """
    marks = list(audited) if audited is not None else [False] * len(turns)
    counts = CalibrationCounts()
    for turn, verdict, mark in zip(turns, verdicts, marks, strict=True):
        counts.add(turn, verdict, mark)
    return counts.calibration()


def applied_calibration(
    prior: Mapping[str, Any], turns: Iterable[Record], source: str
) -> dict[str, Any]:
    """An earlier calibration applied to this run's panel and voted turns.

    ``votes_leaning_on_flagged`` counts the voted turns where fewer than two teachers would
    agree without the flagged ones.
    """
    counts = CalibrationCounts()
    for turn in turns:
        counts.add(turn, None)
    return counts.applied(prior, source)
