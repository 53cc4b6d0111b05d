"""Agreement of a ProactiveEval judge with people: weighted kappa on a held-out half.

The paper reports its judge's weighted kappa (0.826 planning, 0.721 guidance). todeval's local
judges fit their 1-10 map on one half of the labelled sample, so agreement is read on the
other: :func:`calibration_half` splits by environment (odd ``nn`` fit, even held out), so every
domain and tier is in both halves and an environment's plans stay together.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Literal

import numpy as np

from todeval.evals.metrics.agreement import weighted_kappa

Half = Literal["fit", "held_out"]

_NUMBERED = re.compile(r"-(\d+)$")


def calibration_half(environment_id: str) -> Half:
    """``fit`` for odd-numbered environments, ``held_out`` for even (others by a stable hash)."""
    match = _NUMBERED.search(environment_id)
    number = int(match.group(1)) if match else hashlib.sha256(environment_id.encode()).digest()[0]
    return "fit" if number % 2 else "held_out"


def kappa_interval(
    judge: Sequence[int | None],
    people: Sequence[int | None],
    *,
    resamples: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[float | None, float | None]:
    """Percentile bootstrap interval of the quadratic weighted kappa (items resampled)."""
    pairs = [(a, b) for a, b in zip(judge, people, strict=True) if a is not None and b is not None]
    if len(pairs) < 2:
        return None, None
    rng = np.random.default_rng(seed)
    stats = []
    for _ in range(resamples):
        drawn = [pairs[i] for i in rng.integers(0, len(pairs), len(pairs))]
        value = weighted_kappa([a for a, _ in drawn], [b for _, b in drawn])
        if value is not None:
            stats.append(value)
    if not stats:
        return None, None
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(stats, [tail, 100 - tail])
    return round(float(low), 3), round(float(high), 3)
