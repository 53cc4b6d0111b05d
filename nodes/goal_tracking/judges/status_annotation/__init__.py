"""The status-annotation role (paper 000, §4.4).

* ``local`` - :class:`~.local.LocalStatusAnnotator`: the local generator's own labels.
* ``<provider>:<model>`` - :class:`~.llm.LLMStatusAnnotator`: the annotation prompt per turn.
"""

from __future__ import annotations

import functools

import todeval.nodes.goal_tracking.judges.status_annotation.local  # noqa: F401  (registers it)
from todeval.nodes.goal_tracking.judges.status_annotation.llm import LLMStatusAnnotator
from todeval.nodes.goal_tracking.judges.status_annotation.role import ROLE, Changes, StatusAnnotator
from todeval.nodes.judges import resolve_judge


@functools.lru_cache(maxsize=8)
def status_annotator(spec: str = "local", max_retries: int = 3) -> StatusAnnotator:
    """The annotator for ``spec`` (built once; raises on unknown specs)."""
    annotator: StatusAnnotator = resolve_judge(
        ROLE, spec, lambda parsed: LLMStatusAnnotator(parsed, max_retries=max_retries)
    )
    return annotator


__all__ = ["ROLE", "Changes", "StatusAnnotator", "status_annotator"]
