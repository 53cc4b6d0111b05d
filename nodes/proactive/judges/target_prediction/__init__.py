"""The target-prediction role: the difficulty check's panel of reasoners.

* ``local:lead``, ``local:entity``, ``local:salient`` - crude extractive predictors (see local).
* ``<provider>:<model>`` - Listing 4 at temperature 0 (:class:`~.llm.LLMTargetPredictor`).
"""

from __future__ import annotations

import functools

import todeval.nodes.proactive.judges.target_prediction.local  # noqa: F401  (registers the predictors)
from todeval.nodes.judges import resolve_judge
from todeval.nodes.proactive.judges.target_prediction.llm import LLMTargetPredictor
from todeval.nodes.proactive.judges.target_prediction.role import ROLE, TargetPredictor


@functools.lru_cache(maxsize=16)
def target_predictor(spec: str, max_retries: int = 3) -> TargetPredictor:
    """The predictor for ``spec`` (built once per spec; raises on unknown specs)."""
    predictor: TargetPredictor = resolve_judge(
        ROLE, spec, lambda parsed: LLMTargetPredictor(parsed, max_retries=max_retries)
    )
    return predictor


__all__ = ["ROLE", "TargetPredictor", "target_predictor"]
