"""A local judge's map from its sub-scores to a 1-10 score, fit on half the team's labels.

The local ProactiveEval judges measure what rules and embeddings can measure; they do not read
a dialogue or a plan the way Listings 11-12 ask. Their 1-10 ``overall`` exists only through a
linear map from those measurements to the team's scores, fit by
``scripts/proactive_calibration.py`` on one half of ``data/samples/proactive/labelled/`` and
checked on the other (the validity card prints the held-out kappa). Without a calibration file
the overall is None, with the reason.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path


@dataclass(frozen=True)
class CalibratedMap:
    """``overall = clip(round(intercept + sum(weight * feature)), 1, 10)``.

    Attributes:
        intercept: The constant term.
        coefficients: Feature name -> fitted weight.
        basis: One line for the verdict: where it was fit and how it did on the other half.
        fixed: Feature name -> a weight a stated rule gives (not fitted), e.g. Listing 4's
            format rule costing 1 point.
    """

    intercept: float
    coefficients: dict[str, float]
    basis: str
    fixed: dict[str, float] = field(default_factory=dict)

    def score(self, features: Mapping[str, float | None]) -> int | None:
        """The 1-10 score, or None when a feature the map needs is missing."""
        total = self.intercept
        for name, weight in (self.coefficients | self.fixed).items():
            value = features.get(name)
            if value is None:
                return None
            total += weight * value
        return int(min(10, max(1, round(total))))

    def as_json(self) -> dict[str, object]:
        """The map as ``calibration.json`` stores it (under ``"map"``)."""
        return {
            "intercept": self.intercept,
            "coefficients": self.coefficients,
            "basis": self.basis,
            "fixed": self.fixed,
        }


@cache
def read_map(path: Path) -> CalibratedMap | None:
    """The map in a judge package's ``calibration.json`` (None when it has none)."""
    if not path.exists():
        return None
    raw = json.loads(path.read_text(encoding="utf-8"))["map"]
    return CalibratedMap(
        intercept=float(raw["intercept"]),
        coefficients={k: float(v) for k, v in raw["coefficients"].items()},
        basis=str(raw["basis"]),
        fixed={k: float(v) for k, v in raw.get("fixed", {}).items()},
    )
