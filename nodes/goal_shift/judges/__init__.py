"""The goal-shift subsystem's judge roles: shift detection and NL assertions (paper 002)."""

from __future__ import annotations

from todeval.nodes.goal_shift.judges.nl_assertion import nl_assertion_judge
from todeval.nodes.goal_shift.judges.nl_assertion.role import ROLE as NL_ROLE
from todeval.nodes.goal_shift.judges.shift_detection import shift_detector
from todeval.nodes.goal_shift.judges.shift_detection.role import ROLE as SHIFT_ROLE
from todeval.nodes.judges import check_spec


def check_goal_shift_judges(shift_detection: str, nl_assertion: str) -> None:
    """Fail on a bad spec before any conversation is read (the judges build lazily).

    Raises:
        JudgeSpecError: A spec is malformed or names an unknown local variant.
    """
    check_spec(SHIFT_ROLE, shift_detection)
    check_spec(NL_ROLE, nl_assertion)


__all__ = ["check_goal_shift_judges", "nl_assertion_judge", "shift_detector"]
