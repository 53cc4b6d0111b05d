"""The status-annotation role: every goal's status at every turn (paper 000, §4.4, A.7).

Given the annotation's goals and a draft's turns, return the status changes of each turn,
``[[goal_id, new_status], ...]`` per turn; the synthesis graph accumulates them into Listing 2's
``goal_status_changes`` and ``all_goals``.
"""

from __future__ import annotations

from typing import Any, Protocol

from todeval.nodes.judges.result import JudgeResult

ROLE = "status_annotation"

Changes = list[list[list[str]]]
"""Per turn, its ``[goal_id, new_status]`` changes."""


class StatusAnnotator(Protocol):
    """Anything that labels a draft's turns."""

    name: str

    def annotate(self, annotation: dict[str, Any], draft: dict[str, Any]) -> JudgeResult[Changes]:
        """The changes per turn, or None with the reason."""
        ...
