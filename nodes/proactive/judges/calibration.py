"""What a calibrated local judge was fit on half the team's labels: a 1-10 map, or cut points.

The local ProactiveEval judges' 1-10 ``overall`` exists only through a linear map from their
measurements to the team's scores, fit by ``scripts/proactive_calibration.py`` on one half of
``data/samples/proactive/labelled/`` and checked on the other. Without a calibration file the
overall is None, with the reason. Target density's file holds cut points (``"cuts"``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class CalibratedMap:
    """``overall = clip(round(intercept + sum(weight * feature)), 1, 10)``.

    ``fixed`` weights come from a stated rule, not a fit (Listing 4's format rule costs 1 point);
    ``basis`` says where the map was fit and how it did on the other half.
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
def read_calibration(path: Path) -> dict[str, Any] | None:
    """A calibrated judge's ``calibration.json`` (None when it has none), read once.

    It holds what ``scripts/proactive_calibration.py`` fit: ``"map"`` (a 1-10 map) or
    ``"cuts"`` (the target-density cut points), and the figures it fit them on.
    """
    if not path.exists():
        return None
    loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


def read_map(path: Path) -> CalibratedMap | None:
    """The map in a judge package's ``calibration.json`` (None when it has none)."""
    raw = (read_calibration(path) or {}).get("map")
    if raw is None:
        return None
    return CalibratedMap(
        intercept=float(raw["intercept"]),
        coefficients={k: float(v) for k, v in raw["coefficients"].items()},
        basis=str(raw["basis"]),
        fixed={k: float(v) for k, v in raw.get("fixed", {}).items()},
    )


def calibrated_score(
    path: Path, features: Mapping[str, float | None], see: str
) -> tuple[int | None, str]:
    """The 1-10 score through the map at ``path``, and its basis.

    Without a map the score is None and the basis says so, pointing the reader to ``see`` (the
    sub-scores the judge did measure).
    """
    mapping = read_map(path)
    if mapping is None:
        return None, (
            "not scored: the local judge has no calibrated map to 1-10 (run "
            f"scripts/proactive_calibration.py); see {see}"
        )
    return mapping.score(features), mapping.basis
