"""Agreement of teachers, their vote and reference labels on voted turns (paper 004).

Section 6 votes several teachers per turn; Appendix C checks the labels against human annotators.
:func:`teacher_agreement` measures the teachers against each other (Fleiss' and pairwise Cohen's
kappa), :func:`reference_agreement` each teacher and the vote against gold labels or human verdicts.
Voted turns are :mod:`evals.metrics.goal_success.success_rate`'s records, each with its ``teachers``
list; the statistics are :mod:`evals.metrics.agreement`'s.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from evals.metrics.agreement import accuracy, cohen_kappa, fleiss_kappa, paired

Record = Mapping[str, Any]
"""A voted turn, a teacher's label or a reference label, as the data contract spells them."""


def turn_outcome(quality: str | None, rcof: str | None) -> str | None:
    """One label for quality and cause: ``success``, the failure's code, or ``failure``."""
    if quality is None or quality == "success":
        return quality
    return rcof or "failure"


def teacher_agreement(turns: Sequence[Record]) -> dict[str, Any]:
    """Inter-teacher agreement on the turns of a voted run (paper 004, Section 6).

    Teachers are told apart by their position in each turn's ``teachers`` list (two positions
    may share a judge spec). Fleiss' kappa is taken over the turns where every teacher gave a
    quality, on ``quality`` and on ``outcome`` (:func:`turn_outcome`: the failure's code, so two
    teachers who both say "failure" but blame different causes disagree). Cohen's kappa of
    each pair of teachers is taken over the turns both of them judged.

    Returns:
        ``{"quality": {"fleiss_kappa", "n_turns"}, "outcome": {"fleiss_kappa", "n_turns"},
        "pairwise": [{"a", "b", "a_index", "b_index", "quality_kappa", "n"}]}``, kappas rounded
        to 4 decimals; a kappa is ``None`` with fewer than two teachers or when undefined.

    Raises:
        ValueError: Turns have different numbers of teachers.
    """
    judges = _panel(turns)
    complete = [
        turn["teachers"]
        for turn in turns
        if all(teacher["quality"] is not None for teacher in turn["teachers"])
    ]
    quality_items = [[teacher["quality"] for teacher in panel] for panel in complete]
    outcome_items = [
        [turn_outcome(t["quality"], t.get("rcof")) for t in panel] for panel in complete
    ]
    pairwise = []
    for a in range(len(judges)):
        for b in range(a + 1, len(judges)):
            labels_a = [turn["teachers"][a]["quality"] for turn in turns]
            labels_b = [turn["teachers"][b]["quality"] for turn in turns]
            pairwise.append(
                {
                    "a": judges[a],
                    "b": judges[b],
                    "a_index": a,
                    "b_index": b,
                    "quality_kappa": _round(cohen_kappa(labels_a, labels_b)),
                    "n": len(paired(labels_a, labels_b)),
                }
            )
    return {
        "quality": _fleiss(quality_items, len(judges)),
        "outcome": _fleiss(outcome_items, len(judges)),
        "pairwise": pairwise,
    }


def reference_agreement(
    turns: Sequence[Record], references: Sequence[Record | None]
) -> dict[str, Any]:
    """Each teacher's and the vote's agreement with reference labels (paper 004, Appendix C).

    The references are gold labels or human verdicts, one per turn (``None`` if the turn has
    none). ``quality`` agreement (``accuracy``, Cohen ``kappa``, ``n``) is over the turns
    where both the labeller and the reference have a quality. ``rcof`` agreement is over the
    turns whose reference is a failure with a code: ``coverage`` is the share of those where
    the labeller gave a code at all, and ``accuracy``/``kappa``/``n`` are over the ones where it
    did, so a labeller that says "success" or gives no code lowers coverage, not accuracy.

    Args:
        turns: Voted turns.
        references: ``{"quality", "rcof"}`` or ``None`` per turn, aligned with ``turns``.

    Returns:
        ``{"n_turns": turns with a reference, "teachers": [{"index", "judge", "quality",
        "rcof"}], "vote": {"quality", "rcof"}}``, rates rounded to 4 decimals.

    Raises:
        ValueError: ``references`` is not aligned with ``turns``, or turns have different
            numbers of teachers.
    """
    return {
        "n_turns": sum(ref is not None for ref in references),
        "teachers": [
            {"index": index, "judge": judge}
            | labeller_agreement([turn["teachers"][index] for turn in turns], references)
            for index, judge in enumerate(_panel(turns))
        ],
        "vote": labeller_agreement(turns, references),
    }


def labeller_agreement(
    labels: Sequence[Record], references: Sequence[Record | None], *, ndigits: int | None = 4
) -> dict[str, Any]:
    """One labeller's agreement with reference labels, as :func:`reference_agreement` defines it.

    Args:
        labels: ``{"quality", "rcof"}`` per turn from one labeller (a teacher or the vote).
        references: ``{"quality", "rcof"}`` or ``None`` per turn, aligned with ``labels``.
        ndigits: Decimals to round the rates to; ``None`` leaves them unrounded.

    Returns:
        ``{"quality": {"accuracy", "kappa", "n"}, "rcof": {"accuracy", "kappa", "n",
        "coverage"}}``, rates ``None`` over nothing.

    Raises:
        ValueError: ``references`` is not aligned with ``labels``.
    """
    if len(references) != len(labels):
        raise ValueError(f"{len(references)} references for {len(labels)} turns")
    gold_quality = [None if ref is None else ref.get("quality") for ref in references]
    gold_code = [
        ref.get("rcof") if ref is not None and ref.get("quality") == "failure" else None
        for ref in references
    ]
    quality = [label["quality"] for label in labels]
    codes = [label.get("rcof") for label in labels]
    with_gold = [code for code, gold in zip(codes, gold_code, strict=True) if gold is not None]
    coded = sum(code is not None for code in with_gold)
    coverage = coded / len(with_gold) if with_gold else None
    return {
        "quality": _agreement(quality, gold_quality, ndigits),
        "rcof": _agreement(codes, gold_code, ndigits) | {"coverage": _round(coverage, ndigits)},
    }


def _panel(turns: Sequence[Record]) -> list[str]:
    """The judges by position; every turn must have the same number of teachers."""
    sizes = sorted({len(turn["teachers"]) for turn in turns})
    if len(sizes) > 1:
        raise ValueError(f"every turn needs the same teachers, got panels of sizes {sizes}")
    return [str(teacher["judge"]) for teacher in turns[0]["teachers"]] if turns else []


def _fleiss(items: Sequence[Sequence[Hashable]], raters: int) -> dict[str, Any]:
    kappa = fleiss_kappa(items) if raters >= 2 else None
    return {"fleiss_kappa": _round(kappa), "n_turns": len(items)}


def _agreement(
    labels: Sequence[Hashable | None], gold: Sequence[Hashable | None], ndigits: int | None
) -> dict[str, Any]:
    return {
        "accuracy": _round(accuracy(labels, gold), ndigits),
        "kappa": _round(cohen_kappa(labels, gold), ndigits),
        "n": len(paired(labels, gold)),
    }


def _round(value: float | None, ndigits: int | None = 4) -> float | None:
    return value if value is None or ndigits is None else round(value, ndigits)
