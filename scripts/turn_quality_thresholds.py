"""Each learned teacher's cut-offs, chosen on SGD dev only (never on the data reported on).

The dev mix is the real dev turns with their recorded labels plus the corrupted ones, weighted
so that they make up :data:`SYNTHETIC_WEIGHT` of it. ``fail`` is the cut-off that maximises
Cohen's kappa on that mix; ``succ`` the highest cut-off below ``fail`` under which at most
:data:`MAX_MISSED` of the turns (by weight) failed. Between them the teacher abstains. A band
of reply-side evidence (``local:turn``, and the last-turn band of the reaction teachers) is
chosen without the failures only a reaction shows: that evidence cannot see them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from scripts.turn_quality_data import REACTION_ONLY, LabelledView
from todeval.nodes.goal_success.judges.turn_quality.evidence import EvidenceBlocks
from todeval.nodes.goal_success.judges.turn_quality.learned import TurnQualityModel

SYNTHETIC_WEIGHT = 0.04
MAX_MISSED = 0.025
Array = NDArray[Any]


def weighted_kappa(y: Array, predicted: Array, weights: Array) -> float:
    """Cohen's kappa of two binary labellings, items weighted."""
    total = weights.sum()
    observed = np.sum(weights * (y == predicted)) / total
    rate_y, rate_p = np.sum(weights * y) / total, np.sum(weights * predicted) / total
    expected = rate_y * rate_p + (1 - rate_y) * (1 - rate_p)
    return float((observed - expected) / (1 - expected)) if expected < 1 else 0.0


def band(p: Array, y: Array, weights: Array) -> dict[str, float]:
    """``fail``, ``succ``, the dev kappa at ``fail`` and the share of dev turns in the band."""
    grid = np.unique(np.quantile(p, np.linspace(0.5, 0.995, 200)))
    kappas = [weighted_kappa(y, (p >= g).astype(int), weights) for g in grid]
    fail = float(grid[int(np.argmax(kappas))])
    succ = 0.0
    for g in np.unique(np.quantile(p, np.linspace(0.01, 0.95, 200))):
        below = p < g
        missed = np.sum(weights[below] * y[below]) / max(float(weights[below].sum()), 1e-9)
        if g < fail and missed <= MAX_MISSED:
            succ = float(g)
    counted = weights > 0
    share = float(np.mean(((p >= succ) & (p < fail))[counted]))
    return {
        "succ": round(succ, 4),
        "fail": round(fail, 4),
        "dev_kappa": round(max(kappas), 3),
        "dev_band_share": round(share, 3),
    }


def choose_bands(
    model: TurnQualityModel, views: Sequence[LabelledView], blocks: EvidenceBlocks
) -> dict[str, dict[str, Any]]:
    """Per teacher ``band`` (and ``alone_band`` for the reaction teachers) on dev ``views``."""
    y = np.array([v.label for v in views])
    synthetic = np.array([v.kind.startswith("corrupt") for v in views])
    weights = np.ones(len(y))
    weights[synthetic] = (
        SYNTHETIC_WEIGHT * (~synthetic).sum() / max(synthetic.sum(), 1) / (1 - SYNTHETIC_WEIGHT)
    )
    reaction_only = np.array([v.kind in REACTION_ONLY for v in views])
    reply_weights = np.where(reaction_only, 0.0, weights)
    logits = model.block_logits(blocks, ("R", "C", "N"))
    out: dict[str, dict[str, Any]] = {}
    for key in model.meta["teachers"]:
        blocks_read = model.teacher(key)["blocks"]
        p, _ = model.probability(key, logits, blocks.has_next)
        if "N" not in blocks_read:
            out[key] = {"band": band(p, y, reply_weights)}
            continue
        has_next = blocks.has_next
        out[key] = {"band": band(p[has_next], y[has_next], weights[has_next])}
        alone = 1.0 / (1.0 + np.exp(-model.alone_logit(key, logits)))
        out[key]["alone_band"] = band(alone, y, reply_weights)
    return out
