"""ProactiveEval's settings: the synthesis pipeline's sampling and refinement.

Read with ``ProactiveSettings.of(context)``; the judges (``target_planning``, ``guidance``, the
synthesis panels...) are in ``Context.judges``.
"""

from __future__ import annotations

from pydantic import Field

from todeval.nodes.context import SubsystemSettings


class ProactiveSettings(SubsystemSettings, section="proactive"):
    """ProactiveEval's data synthesis."""

    synthesis_candidates: int = Field(
        5, gt=0, description="Candidate targets sampled per environment (the paper's n = 5)."
    )
    synthesis_temperature: float = Field(
        1.0, description="Sampling temperature of the candidate targets (the paper: high)."
    )
    max_refinements: int = Field(
        5,
        description="Refinement rounds (obfuscation, then noise) at most while a majority of the "
        "target_prediction panel still finds the target (the paper: 5).",
    )
