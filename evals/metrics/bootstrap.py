"""Bootstrap intervals of corpus figures and paired differences between two runs.

A corpus figure is a ratio of sums over records, so resampling records and pooling their parts
is the figure on a resampled corpus. :func:`paired_difference` recomputes both runs on the
*same* resampled records, so what a record contributes to both cancels out. A record counts for
a difference only when both runs have its part, so ``a``/``b`` there may differ from each run's
own figure. Resampling is vectorised over blocks of index rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Literal

import numpy as np
import numpy.typing as npt

from todeval.evals.metrics.record_metrics import Part

Change = Literal["better", "worse", "higher", "lower", "no clear change"]
"""How B compares with A: better/worse for a metric with a direction, higher/lower without."""

_BLOCK_CELLS = 1 << 18
"""Index cells drawn per block (2 MB of int64, and as much per gathered column), so memory stays
flat however many records: at 1 << 22 a corpus of 2,482 records drew its 1,000 resamples in one
block and gathered 20 MB columns at the end of every run. The draws are the same whatever the
block (the generator's stream does not depend on how it is cut), so the intervals are too."""


@dataclass(frozen=True)
class Interval:
    """A corpus figure over ``n`` records with its bootstrap interval (all None without one)."""

    value: float | None
    low: float | None
    high: float | None
    n: int


@dataclass(frozen=True)
class PairedDifference:
    """``B - A`` over the records both runs have a part for, with its paired bootstrap interval.

    ``a`` and ``b`` are the figures over the shared records from the same resamples;
    ``excludes_zero`` says whether the interval lies wholly on one side of 0.
    """

    a: Interval
    b: Interval
    delta: float | None
    low: float | None
    high: float | None
    n: int
    excludes_zero: bool


@dataclass(frozen=True)
class RecordChange:
    """One record's own value (``num / den``) in both runs."""

    record_id: str
    value_a: float
    value_b: float

    @property
    def change(self) -> float:
        """``value_b - value_a``."""
        return self.value_b - self.value_a


def _columns(parts: Sequence[Part]) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    num = np.fromiter((p["num"] for p in parts), dtype=np.float64, count=len(parts))
    den = np.fromiter((p["den"] for p in parts), dtype=np.float64, count=len(parts))
    return num, den


def _ratio(num: float, den: float) -> float | None:
    return num / den if den else None


def _resampled_ratios(
    columns: Sequence[tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]],
    resamples: int,
    seed: int,
) -> list[npt.NDArray[np.float64]]:
    """Per ``(num, den)`` column pair, its ratio of sums in each resample (NaN when den is 0).

    Every pair is gathered with the same index rows: A and B see the same resampled records.
    """
    n = len(columns[0][0])
    rng = np.random.default_rng(seed)
    block = max(1, _BLOCK_CELLS // n)
    ratios = [np.empty(resamples) for _ in columns]
    with np.errstate(divide="ignore", invalid="ignore"):
        for start in range(0, resamples, block):
            rows = min(block, resamples - start)
            index = rng.integers(0, n, size=(rows, n))
            for out, (num, den) in zip(ratios, columns, strict=True):
                sums = np.take(num, index).sum(axis=1), np.take(den, index).sum(axis=1)
                out[start : start + rows] = sums[0] / sums[1]
    return ratios


def _percentiles(stats: npt.NDArray[np.float64], level: float) -> tuple[float | None, float | None]:
    """The central ``level`` percentile range, over resamples whose figure is defined."""
    finite = stats[np.isfinite(stats)]
    if not finite.size:
        return None, None
    tail = (1.0 - level) / 2 * 100
    low, high = np.percentile(finite, [tail, 100 - tail])
    return float(low), float(high)


def _check(resamples: int, level: float) -> None:
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, got {level}")


def bootstrap_interval(
    parts: Sequence[Part], *, resamples: int = 1000, seed: int = 0, level: float = 0.95
) -> Interval:
    """Percentile bootstrap interval of ``sum(num) / sum(den)`` over records.

    Resamples whose denominators sum to 0 are left out; all None when no record has a positive
    denominator. The same ``seed`` gives the same interval.

    Raises:
        ValueError: If ``resamples`` < 1 or ``level`` is not in (0, 1).
    """
    _check(resamples, level)
    num, den = _columns(parts)
    if not den.sum():  # nothing to resample (and no figure to bound)
        return Interval(None, None, None, len(parts))
    return _interval(num, den, _resampled_ratios([(num, den)], resamples, seed)[0], level)


def _interval(
    num: npt.NDArray[np.float64],
    den: npt.NDArray[np.float64],
    ratios: npt.NDArray[np.float64],
    level: float,
) -> Interval:
    value = _ratio(float(num.sum()), float(den.sum()))
    if value is None:
        return Interval(None, None, None, len(num))
    low, high = _percentiles(ratios, level)
    return Interval(value, low, high, len(num))


def paired_difference(
    pairs: Sequence[tuple[Part, Part]],
    *,
    resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> PairedDifference:
    """Paired percentile bootstrap of ``B - A`` over records both runs have a part for.

    Each resample draws one set of records for both runs; one where either run's denominators
    sum to 0 is left out of the difference's percentiles.

    Raises:
        ValueError: If ``resamples`` < 1 or ``level`` is not in (0, 1).
    """
    _check(resamples, level)
    columns = [_columns([a for a, _ in pairs]), _columns([b for _, b in pairs])]
    if not pairs:
        empty = Interval(None, None, None, 0)
        return PairedDifference(empty, empty, None, None, None, 0, False)
    ratios_a, ratios_b = _resampled_ratios(columns, resamples, seed)
    a = _interval(*columns[0], ratios_a, level)
    b = _interval(*columns[1], ratios_b, level)
    if a.value is None or b.value is None:
        return PairedDifference(a, b, None, None, None, len(pairs), False)
    low, high = _percentiles(ratios_b - ratios_a, level)
    excludes_zero = low is not None and high is not None and (low > 0 or high < 0)
    return PairedDifference(a, b, b.value - a.value, low, high, len(pairs), excludes_zero)


def change_verdict(difference: PairedDifference, higher_is_better: bool | None) -> Change:
    """``better``/``worse`` when the interval excludes 0 (``higher``/``lower`` for no direction)."""
    if not difference.excludes_zero or difference.delta is None:
        return "no clear change"
    up = difference.delta > 0
    if higher_is_better is None:
        return "higher" if up else "lower"
    return "better" if up == higher_is_better else "worse"


def most_changed(pairs: Mapping[str, tuple[Part, Part]], top: int) -> list[RecordChange]:
    """The ``top`` records whose defined value moved most between the runs, largest move first."""
    changes = [
        RecordChange(record_id, a["num"] / a["den"], b["num"] / b["den"])
        for record_id, (a, b) in pairs.items()
        if a["den"] and b["den"]
    ]
    moved = [c for c in changes if c.change != 0]
    return sorted(moved, key=lambda c: -abs(c.change))[: max(top, 0)]


def minimum_detectable_difference(
    difference: PairedDifference, *, level: float = 0.95, power: float = 0.8
) -> float | None:
    """The smallest ``|B - A|`` these records would show at ``level`` with ``power``.

    From the paired interval's width (its standard error, as a normal approximation): a
    difference below it is within the noise of a corpus this size; None without an interval.
    """
    if difference.low is None or difference.high is None:
        return None
    z_level = NormalDist().inv_cdf(0.5 + level / 2)
    z_power = NormalDist().inv_cdf(power)
    return (z_level + z_power) * (difference.high - difference.low) / (2 * z_level)
