"""Release gates: ``--fail-under FIGURE=VALUE[,...]`` on evaluate, simulate and compare.

A gate fails when the figure is below its threshold; a figure that is n/a (no record had a part,
or the run does not compute it) fails too unless n/a is allowed, since a gate that passes on
nothing would let an empty run through. Each failure reads as one line with the figure, its 95 %
interval where the run has one, and the threshold. The threshold ``floor`` asks the figure to be
above its do-nothing floor (what floor agents reach with the same judges); a figure without a
measured floor is n/a for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

FLOOR: Literal["floor"] = "floor"
"""The threshold that asks a figure to be above its do-nothing floor."""

Threshold = float | Literal["floor"]


class GateSpecError(ValueError):
    """A ``--fail-under`` value that is not ``FIGURE=NUMBER[,...]``."""


@dataclass(frozen=True)
class Figure:
    """A figure as a gate reads it.

    ``low``/``high``: its interval; ``floor``: what do-nothing agents reach; None when absent.
    """

    value: float | None
    low: float | None = None
    high: float | None = None
    floor: float | None = None


def parse_thresholds(text: str) -> dict[str, Threshold]:
    """``"gsr=0.4,tsr=floor"`` -> ``{"gsr": 0.4, "tsr": "floor"}``.

    Raises:
        GateSpecError: An item is not ``FIGURE=NUMBER`` or ``FIGURE=floor``.
    """
    thresholds: dict[str, Threshold] = {}
    for item in (part.strip() for part in text.split(",")):
        name, sep, number = item.partition("=")
        try:
            if not sep or not name.strip():
                raise ValueError
            given = number.strip().lower()
            thresholds[name.strip()] = FLOOR if given == FLOOR else float(given)
        except ValueError:
            raise GateSpecError(
                f"--fail-under {text!r}: expected FIGURE=NUMBER[,...] or FIGURE=floor, e.g. "
                "gsr=0.4,tsr=floor"
            ) from None
    return thresholds


def gate_failures(
    figures: Mapping[str, Figure], thresholds: Mapping[str, Threshold], *, allow_na: bool = False
) -> list[str]:
    """One line per threshold the run does not meet (empty: the gate passes)."""
    failures = []
    for name, threshold in thresholds.items():
        figure = figures.get(name)
        if figure is None or figure.value is None:
            if not allow_na:
                known = ", ".join(sorted(figures)) or "none"
                failures.append(
                    f"{name} is n/a (threshold {_shown(threshold)}); figures of this run: {known}"
                )
            continue
        interval = (
            f" [95 % interval {figure.low:.3f}, {figure.high:.3f}]"
            if figure.low is not None and figure.high is not None
            else ""
        )
        if isinstance(threshold, str):  # FLOOR
            if figure.floor is None:
                if not allow_na:
                    measured = (n for n, f in figures.items() if f.floor is not None)
                    with_floor = ", ".join(sorted(measured))
                    failures.append(
                        f"{name} has no measured do-nothing floor; figures with one: "
                        f"{with_floor or 'none'}"
                    )
            elif figure.value <= figure.floor:
                failures.append(
                    f"{name} {figure.value:.3f}{interval} is not above its do-nothing floor "
                    f"{figure.floor:.3f}"
                )
        elif figure.value < threshold:
            failures.append(f"{name} {figure.value:.3f}{interval} is under {threshold:g}")
    return failures


def _shown(threshold: Threshold) -> str:
    return threshold if isinstance(threshold, str) else f"{threshold:g}"
