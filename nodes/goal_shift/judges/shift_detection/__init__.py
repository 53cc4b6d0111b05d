"""The shift-detection judge role: where the user shifted goals and when the agent recovered.

Used when a transcript has no stored judge output (``gsrt_v2``) or stored outputs are not
reused. Two judges share :class:`ShiftDetector`:

* ``<provider>:<model>`` - the Appendix G prompt (:mod:`nodes.prompts.goal_shift`) through
  :class:`LLMJudge`; shifts are checked against the task's goal order before they are kept.
* ``local`` - :class:`LocalShiftDetector`, transparent rules over MiniLM similarities between
  messages and the task's goal labels (see its docstring).
"""

from __future__ import annotations

import functools

import todeval.nodes.goal_shift.judges.shift_detection.local  # noqa: F401  (registers the local detector)
from todeval.nodes.goal_shift.judges.shift_detection.llm import LLMShiftDetector
from todeval.nodes.goal_shift.judges.shift_detection.role import ROLE, ShiftDetector
from todeval.nodes.judges import resolve_judge


@functools.lru_cache(maxsize=16)
def shift_detector(spec: str, max_retries: int = 3) -> ShiftDetector:
    """The detector for ``spec`` (built once per spec; raises on unknown specs)."""
    detector: ShiftDetector = resolve_judge(
        ROLE, spec, lambda parsed: LLMShiftDetector(parsed, max_retries=max_retries)
    )
    return detector


__all__ = ["shift_detector"]
