"""The trajectory-annotation role (paper 000, §4.2): slot values, dependencies, complexity.

* ``local`` - :class:`~.local.LocalTrajectoryAnnotator`: real SGD episodes and rules; it also
  plans what the local dialogue generator composes.
* ``<provider>:<model>`` - :class:`~.llm.LLMTrajectoryAnnotator`: the annotation prompt.
"""

from __future__ import annotations

import functools

import todeval.nodes.goal_tracking.judges.trajectory_annotation.local  # noqa: F401  (registers it)
from todeval.nodes.goal_tracking.judges.trajectory_annotation.llm import LLMTrajectoryAnnotator
from todeval.nodes.goal_tracking.judges.trajectory_annotation.role import (
    ROLE,
    Annotation,
    TrajectoryAnnotator,
)
from todeval.nodes.judges import resolve_judge


@functools.lru_cache(maxsize=8)
def trajectory_annotator(spec: str = "local", max_retries: int = 3) -> TrajectoryAnnotator:
    """The annotator for ``spec`` (built once; raises on unknown specs)."""
    annotator: TrajectoryAnnotator = resolve_judge(
        ROLE, spec, lambda parsed: LLMTrajectoryAnnotator(parsed, max_retries=max_retries)
    )
    return annotator


__all__ = ["ROLE", "Annotation", "TrajectoryAnnotator", "trajectory_annotator"]
