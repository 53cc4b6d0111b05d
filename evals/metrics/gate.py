"""Release gates: ``--fail-under FIGURE=VALUE[,...]`` on evaluate, simulate and compare.

A gate fails when the figure is below its threshold; a figure that is n/a (no record had a part,
or the run does not compute it) fails too unless n/a is allowed, since a gate that passes on
nothing would let an empty run through. Each failure reads as one line with the figure, its 95 %
interval where the run has one, and the threshold.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


class GateSpecError(ValueError):
    """A ``--fail-under`` value that is not ``FIGURE=NUMBER[,...]``."""


@dataclass(frozen=True)
class Figure:
    """A figure as a gate reads it (``low``/``high``: its interval, None when there is none)."""

    value: float | None
    low: float | None = None
    high: float | None = None


def parse_thresholds(text: str) -> dict[str, float]:
    """``"gsr=0.4,tsr=0.5"`` -> ``{"gsr": 0.4, "tsr": 0.5}``.

    Raises:
        GateSpecError: An item is not ``FIGURE=NUMBER``.
    """
    thresholds: dict[str, float] = {}
    for item in (part.strip() for part in text.split(",")):
        name, sep, number = item.partition("=")
        try:
            if not sep or not name.strip():
                raise ValueError
            thresholds[name.strip()] = float(number)
        except ValueError:
            raise GateSpecError(
                f"--fail-under {text!r}: expected FIGURE=NUMBER[,...], e.g. gsr=0.4,tsr=0.5"
            ) from None
    return thresholds


def gate_failures(
    figures: Mapping[str, Figure], thresholds: Mapping[str, float], *, allow_na: bool = False
) -> list[str]:
    """One line per threshold the run does not meet (empty: the gate passes)."""
    failures = []
    for name, threshold in thresholds.items():
        figure = figures.get(name)
        if figure is None or figure.value is None:
            if not allow_na:
                known = ", ".join(sorted(figures)) or "none"
                failures.append(
                    f"{name} is n/a (threshold {threshold:g}); figures of this run: {known}"
                )
            continue
        if figure.value < threshold:
            interval = (
                f" [95 % interval {figure.low:.3f}, {figure.high:.3f}]"
                if figure.low is not None and figure.high is not None
                else ""
            )
            failures.append(f"{name} {figure.value:.3f}{interval} is under {threshold:g}")
    return failures
