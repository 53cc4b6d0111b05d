"""A difficulty-panel reasoner: predicts an environment's target (paper 003, Refinement).

The paper lets three models of different scale each predict the target; an environment most of
them get right is easy and is refined. Each member returns a plan (its target is what is
matched), or None with the reason.
"""

from __future__ import annotations

from typing import Protocol

from todeval.evals.proactive_schema import Environment, TargetPlan
from todeval.nodes.judges.result import JudgeResult

ROLE = "target_prediction"


class TargetPredictor(Protocol):
    """Anything that predicts the target of an environment."""

    name: str

    def predict(self, domain: str, environment: Environment) -> JudgeResult[TargetPlan]:
        """The predicted target (and sub-targets, where the predictor gives them)."""
        ...
