"""The sampling step of paper 004 (Section 6): sample N dialogues, oversampling long sessions.

"We oversample longer sessions to ensure coverage of complex goals. We then sample N
conversations and evaluate each [with the teachers]." The paper gives neither the weight nor
the length cut, so both are parameters: a dialogue with at least ``long_turns`` turns is drawn
with ``long_weight`` times the chance of a short one. Drawing is weighted sampling without
replacement (Efraimidis-Spirakis: each dialogue gets the key ``u ** (1 / weight)`` with ``u``
uniform from a seeded generator, the N largest keys are kept), so the same seed and input give
the same sample; the sampled dialogues keep their input order. :func:`sample_description` says
in the summary what was sampled and how far long sessions were oversampled.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

LONG_TURNS = 4
"""Turns from which a dialogue counts as a long session (multi-goal dialogues in the paper's
sample are mostly four turns or longer)."""

LONG_WEIGHT = 3.0
"""How many times more likely a long session is drawn than a short one."""


@dataclass(frozen=True)
class SampleSpec:
    """How to sample: ``n`` dialogues, ``seed``, the long-session cut and weight."""

    n: int
    seed: int = 0
    long_turns: int = LONG_TURNS
    long_weight: float = LONG_WEIGHT

    def __post_init__(self) -> None:
        if self.n < 1:
            raise ValueError(f"the sample needs at least one dialogue, got n={self.n}")
        if self.long_turns < 1 or self.long_weight < 1:
            raise ValueError(
                f"long sessions need long_turns >= 1 and long_weight >= 1, "
                f"got {self.long_turns} and {self.long_weight}"
            )

    def weight(self, n_turns: int) -> float:
        """The drawing weight of a dialogue with ``n_turns`` turns."""
        return self.long_weight if n_turns >= self.long_turns else 1.0


def sample_indices(lengths: Sequence[int], spec: SampleSpec) -> list[int]:
    """Positions of the ``min(n, len(lengths))`` sampled dialogues, ascending."""
    rng = random.Random(spec.seed)
    keys = [rng.random() ** (1.0 / spec.weight(length)) for length in lengths]
    ranked = sorted(range(len(lengths)), key=lambda i: (-keys[i], i))
    return sorted(ranked[: spec.n])


def sample_description(
    lengths: Sequence[int], chosen: Sequence[int], ids: Sequence[str], spec: SampleSpec
) -> dict[str, Any]:
    """What ``summary.json`` says about the sample: its spec, long-session shares and ids."""

    def long_share(positions: Sequence[int]) -> float | None:
        if not positions:
            return None
        return round(sum(lengths[i] >= spec.long_turns for i in positions) / len(positions), 4)

    return {
        "n": len(chosen),
        "requested": spec.n,
        "population": len(lengths),
        "seed": spec.seed,
        "long_turns": spec.long_turns,
        "long_weight": spec.long_weight,
        "long_share_population": long_share(range(len(lengths))),
        "long_share_sample": long_share(chosen),
        "method": "weighted sampling without replacement (Efraimidis-Spirakis), long sessions "
        "drawn long_weight times as likely; input order kept",
        "dialogue_ids": [ids[i] for i in chosen],
    }
