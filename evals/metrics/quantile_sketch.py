"""A mergeable quantile sketch with a relative error bound (for per-utterance latencies).

A percentile over a corpus has no exact running form, so a run keeps a logarithmic histogram
(DDSketch's bucketing, Masson et al., VLDB 2019): v > 0 falls in bucket ``ceil(log_gamma(v))``
with gamma = (1 + a) / (1 - a), whose representative ``2 gamma^k / (gamma + 1)`` is within
relative error ``a`` of every value in it. Negatives are mirrored, zeros counted apart, and the
exact minimum and maximum kept.

:meth:`LogHistogram.quantile` interpolates between closest ranks as NumPy's default does
(Hyndman-Fan type 7); ``ddsketch`` does not interpolate (its p50 of two values is one of them),
hence no dependency.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

RELATIVE_ERROR = 0.01
"""The sketch's relative error bound: 1 % (a p50 of 250 ms reads 247.5-252.5 ms)."""


@dataclass
class LogHistogram:
    """Counts of values in logarithmic buckets; quantiles within :attr:`relative_error`.

    Args:
        relative_error: The bound ``a`` (0 < a < 1).
    """

    relative_error: float = RELATIVE_ERROR
    positive: Counter[int] = field(default_factory=Counter)
    negative: Counter[int] = field(default_factory=Counter)
    zeros: int = 0
    n: int = 0
    low: float = math.inf
    high: float = -math.inf

    def __post_init__(self) -> None:
        if not 0 < self.relative_error < 1:
            raise ValueError(f"relative_error must be in (0, 1), got {self.relative_error}")
        self._gamma = (1 + self.relative_error) / (1 - self.relative_error)
        self._log_gamma = math.log(self._gamma)

    def add(self, value: float) -> None:
        """Count one value.

        Raises:
            ValueError: The value is not a finite number.
        """
        self.extend((value,))

    def extend(self, values: Iterable[float]) -> None:
        """:meth:`add` each value in turn (one call for a dialogue's latencies).

        Raises:
            ValueError: A value is not a finite number (those before it are counted).
        """
        positive, negative, log_gamma = self.positive, self.negative, self._log_gamma
        isfinite, log, ceil = math.isfinite, math.log, math.ceil
        for value in values:
            if not isfinite(value):
                raise ValueError(f"a sketch counts finite numbers, got {value!r}")
            self.n += 1
            if value < self.low:  # as min() and max(): an equal value leaves them
                self.low = value
            if value > self.high:
                self.high = value
            if value > 0:
                positive[ceil(log(value) / log_gamma)] += 1  # bucket ceil(log_gamma(|v|))
            elif value < 0:
                negative[ceil(log(-value) / log_gamma)] += 1
            else:
                self.zeros += 1

    def merge(self, other: LogHistogram) -> None:
        """Add the values ``other`` counted.

        Raises:
            ValueError: The two sketches have different error bounds (different buckets).
        """
        if other.relative_error != self.relative_error:
            raise ValueError("only sketches with the same relative error can be merged")
        self.positive.update(other.positive)
        self.negative.update(other.negative)
        self.zeros += other.zeros
        self.n += other.n
        self.low, self.high = min(self.low, other.low), max(self.high, other.high)

    def quantile(self, q: float) -> float | None:
        """The ``q``-th percentile (0-100), type 7 as the exact one; None over nothing."""
        if not self.n:
            return None
        position = (self.n - 1) * q / 100
        low = int(position)
        high = min(low + 1, self.n - 1)
        below, above = self._ranked(low), self._ranked(high)
        return below + (above - below) * (position - low)

    def _value(self, bucket: int) -> float:
        return 2 * self._gamma**bucket / (self._gamma + 1)

    def _ranked(self, rank: int) -> float:
        """The value of 0-based ``rank`` in ascending order, read off its bucket."""
        if rank == 0:
            return self.low
        if rank == self.n - 1:
            return self.high
        seen = 0
        for bucket in sorted(self.negative, reverse=True):  # most negative first
            seen += self.negative[bucket]
            if rank < seen:
                return self._clamped(-self._value(bucket))
        seen += self.zeros
        if rank < seen:
            return 0.0
        for bucket in sorted(self.positive):
            seen += self.positive[bucket]
            if rank < seen:
                return self._clamped(self._value(bucket))
        return self.high

    def _clamped(self, value: float) -> float:
        return min(max(value, self.low), self.high)
