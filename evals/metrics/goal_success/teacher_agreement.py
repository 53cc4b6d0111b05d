"""Agreement of teachers, their vote and reference labels on voted turns (paper 004).

Section 6 votes several teachers per turn; Appendix C checks them against human annotators.
:func:`teacher_agreement` measures the teachers against each other, :func:`reference_agreement`
each teacher and the vote against gold labels or human verdicts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from todeval.evals.metrics.agreement import counted_fleiss_kappa, pair_accuracy, pair_kappa
from todeval.evals.metrics.running import FleissCounts, LabelPairs

Record = Mapping[str, Any]
"""A voted turn, a teacher's label or a reference label, as the data contract spells them."""


def turn_outcome(quality: str | None, rcof: str | None) -> str | None:
    """One label for quality and cause: ``success``, the failure's code, or ``failure``."""
    if quality is None or quality == "success":
        return quality
    return rcof or "failure"


def teacher_agreement(turns: Iterable[Record]) -> dict[str, Any]:
    """Inter-teacher agreement on the turns of a voted run (paper 004, Section 6).

    Teachers are told apart by their position in ``teachers``. Fleiss' kappa is over the turns
    every teacher judged, on ``quality`` and on ``outcome`` (:func:`turn_outcome`, so blaming
    different causes is disagreement); Cohen's kappa per pair over the turns both judged.
    Kappas are rounded, ``None`` with fewer than two teachers or when undefined.

    Raises:
        ValueError: Turns have different numbers of teachers.
    """
    counts = PanelCounts()
    for turn in turns:
        counts.add(turn)
    return counts.report()


def reference_agreement(
    turns: Sequence[Record], references: Sequence[Record | None]
) -> dict[str, Any]:
    """Each teacher's and the vote's agreement with reference labels (paper 004, Appendix C).

    ``quality`` agreement is over the turns where both sides have a quality. ``rcof``
    agreement is over the turns whose reference is a failure with a code: ``coverage`` is the
    share where the labeller gave a code, accuracy and kappa are over those, so "success" or no
    code lowers coverage, not accuracy. ``references`` are aligned with ``turns``.

    Raises:
        ValueError: ``references`` is not aligned with ``turns``, or turns have different
            numbers of teachers.
    """
    if len(references) != len(turns):
        raise ValueError(f"{len(references)} references for {len(turns)} turns")
    counts = ReferenceCounts()
    for turn, reference in zip(turns, references, strict=True):
        counts.add(turn, reference)
    return counts.report()


def labeller_agreement(
    labels: Sequence[Record], references: Sequence[Record | None], *, ndigits: int | None = 4
) -> dict[str, Any]:
    """One labeller's agreement with references, as :func:`reference_agreement` defines it.

    Raises:
        ValueError: ``references`` is not aligned with ``labels``.
    """
    if len(references) != len(labels):
        raise ValueError(f"{len(references)} references for {len(labels)} turns")
    counts = LabellerCounts()
    for label, reference in zip(labels, references, strict=True):
        counts.add(label, reference)
    return counts.report(ndigits)


@dataclass
class LabellerCounts:
    """:func:`labeller_agreement`'s counts: one labeller's labels against the references."""

    quality: LabelPairs = field(default_factory=LabelPairs)
    rcof: LabelPairs = field(default_factory=LabelPairs)
    with_code: int = 0
    """Turns whose reference is a failure with a code."""
    coded: int = 0
    """Of those, the turns the labeller gave a code."""

    def add(self, label: Record, reference: Record | None) -> None:
        """Count one turn's label against its reference (``None``: the turn has none)."""
        gold_quality = None if reference is None else reference.get("quality")
        gold_code = None
        if reference is not None and reference.get("quality") == "failure":
            gold_code = reference.get("rcof")
        self.quality.add(label["quality"], gold_quality)
        self.rcof.add(label.get("rcof"), gold_code)
        if gold_code is not None:
            self.with_code += 1
            self.coded += label.get("rcof") is not None

    def merge(self, other: LabellerCounts) -> None:
        """Add the turns ``other`` counted."""
        self.quality.merge(other.quality)
        self.rcof.merge(other.rcof)
        self.with_code += other.with_code
        self.coded += other.coded

    def report(self, ndigits: int | None = 4) -> dict[str, Any]:
        """:func:`labeller_agreement` of the turns counted."""
        coverage = self.coded / self.with_code if self.with_code else None
        return {
            "quality": _agreement(self.quality, ndigits),
            "rcof": _agreement(self.rcof, ndigits) | {"coverage": _round(coverage, ndigits)},
        }


@dataclass
class Panel:
    """The teachers by position, from the first turn, and every panel size met."""

    judges: list[str] | None = None
    sizes: set[int] = field(default_factory=set)

    def add(self, turn: Record) -> None:
        """Note one turn's panel."""
        self.sizes.add(len(turn["teachers"]))
        if self.judges is None:
            self.judges = [str(teacher["judge"]) for teacher in turn["teachers"]]

    def merge(self, other: Panel) -> None:
        """Note ``other``'s panels (its turns came later)."""
        self.judges = self.judges if self.judges is not None else other.judges
        self.sizes |= other.sizes

    def checked(self) -> list[str]:
        """The judges; every turn must have the same number of teachers.

        Raises:
            ValueError: Turns have different numbers of teachers.
        """
        if len(self.sizes) > 1:
            raise ValueError(
                f"every turn needs the same teachers, got panels of sizes {sorted(self.sizes)}"
            )
        return self.judges or []


@dataclass
class PanelCounts:
    """:func:`teacher_agreement`'s counts: Fleiss items and pairwise confusion matrices."""

    panel: Panel = field(default_factory=Panel)
    quality: FleissCounts = field(default_factory=FleissCounts)
    outcome: FleissCounts = field(default_factory=FleissCounts)
    pairwise: dict[tuple[int, int], LabelPairs] = field(default_factory=dict)

    def add(self, turn: Record) -> None:
        """Count one voted turn."""
        self.panel.add(turn)
        panel = turn["teachers"]
        qualities = [teacher["quality"] for teacher in panel]
        if all(quality is not None for quality in qualities):
            self.quality.add(qualities)
            self.outcome.add([turn_outcome(t["quality"], t.get("rcof")) for t in panel])
        size = len(self.panel.judges or [])
        if len(panel) != size:
            return  # a panel of another size: the report raises
        for a in range(size):
            for b in range(a + 1, size):
                pairs = self.pairwise.get((a, b))
                if pairs is None:  # not made for every turn: a dataclass with a Counter
                    pairs = self.pairwise[(a, b)] = LabelPairs()
                pairs.add(qualities[a], qualities[b])

    def merge(self, other: PanelCounts) -> None:
        """Add the turns ``other`` counted."""
        self.panel.merge(other.panel)
        self.quality.merge(other.quality)
        self.outcome.merge(other.outcome)
        for key, pairs in other.pairwise.items():
            self.pairwise.setdefault(key, LabelPairs()).merge(pairs)

    def report(self) -> dict[str, Any]:
        """:func:`teacher_agreement` of the turns counted.

        Raises:
            ValueError: Turns have different numbers of teachers.
        """
        judges = self.panel.checked()
        pairwise = []
        for a in range(len(judges)):
            for b in range(a + 1, len(judges)):
                pairs = self.pairwise.get((a, b), LabelPairs())
                pairwise.append(
                    {
                        "a": judges[a],
                        "b": judges[b],
                        "a_index": a,
                        "b_index": b,
                        "quality_kappa": _round(pair_kappa(pairs)),
                        "n": pairs.n,
                    }
                )
        return {
            "quality": _fleiss(self.quality, len(judges)),
            "outcome": _fleiss(self.outcome, len(judges)),
            "pairwise": pairwise,
        }


@dataclass
class ReferenceCounts:
    """:func:`reference_agreement`'s counts: each teacher and the vote against references."""

    panel: Panel = field(default_factory=Panel)
    n_turns: int = 0
    """Turns with a reference."""
    teachers: list[LabellerCounts] = field(default_factory=list)
    vote: LabellerCounts = field(default_factory=LabellerCounts)

    def add(self, turn: Record, reference: Record | None) -> None:
        """Count one voted turn against its reference (``None``: the turn has none)."""
        self.panel.add(turn)
        self.n_turns += reference is not None
        self.vote.add(turn, reference)
        size = len(self.panel.judges or [])
        if len(turn["teachers"]) != size:
            return  # a panel of another size: the report raises
        self.teachers += [LabellerCounts() for _ in range(size - len(self.teachers))]
        if reference is None:
            return  # nothing to count a teacher's label against
        for index in range(size):
            self.teachers[index].add(turn["teachers"][index], reference)

    def merge(self, other: ReferenceCounts) -> None:
        """Add the turns ``other`` counted."""
        self.panel.merge(other.panel)
        self.n_turns += other.n_turns
        for index, counts in enumerate(other.teachers):
            if index == len(self.teachers):
                self.teachers.append(LabellerCounts())
            self.teachers[index].merge(counts)
        self.vote.merge(other.vote)

    def report(self) -> dict[str, Any]:
        """:func:`reference_agreement` of the turns counted.

        Raises:
            ValueError: Turns have different numbers of teachers.
        """
        return {
            "n_turns": self.n_turns,
            "teachers": [
                {"index": index, "judge": judge} | self.teachers[index].report()
                for index, judge in enumerate(self.panel.checked())
            ],
            "vote": self.vote.report(),
        }


def _fleiss(counts: FleissCounts, raters: int) -> dict[str, Any]:
    kappa = counted_fleiss_kappa(counts) if raters >= 2 else None
    return {"fleiss_kappa": _round(kappa), "n_turns": counts.items}


def _agreement(pairs: LabelPairs, ndigits: int | None) -> dict[str, Any]:
    return {
        "accuracy": _round(pair_accuracy(pairs), ndigits),
        "kappa": _round(pair_kappa(pairs), ndigits),
        "n": pairs.n,
    }


def _round(value: float | None, ndigits: int | None = 4) -> float | None:
    return value if value is None or ndigits is None else round(value, ndigits)
