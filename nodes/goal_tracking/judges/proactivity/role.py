"""The proactivity role: is a proactive action appropriate and beneficial (paper 000, §6.2)?

Input: a :class:`~evals.metrics.goal_tracking.proactive_actions.ProactiveAction`. Output: True
(contextually appropriate and beneficial), False, or None with the reason (no evidence).
"""

from __future__ import annotations

from typing import Protocol

from todeval.evals.metrics.goal_tracking.proactive_actions import ProactiveAction
from todeval.nodes.judges.result import JudgeResult

ROLE = "proactivity"


class ProactivityJudge(Protocol):
    """Anything that judges a proactive action."""

    name: str

    def judge(self, action: ProactiveAction) -> JudgeResult[bool]:
        """The verdict, or None with the reason."""
        ...
