"""Goal shift's judge roles (AgentChangeBench, paper 002): one declaration each.

A role's name is its key everywhere (``--judge ROLE=SPEC``, the config, the summary's judges);
``ROLE.judge(spec)`` builds its judge. Local judges that are real code live in ``judges/``.
"""

from __future__ import annotations

from todeval.nodes.goal_shift.judges.nl_assertion import (
    CARDS as NL_ASSERTION_CARDS,
)
from todeval.nodes.goal_shift.judges.nl_assertion import (
    LLMNLAssertionJudge,
    LocalNLAssertionJudge,
    NLAssertionJudge,
    NLAssertionOutput,
)
from todeval.nodes.goal_shift.judges.shift_detection import (
    LLMShiftDetector,
    ShiftDetectionOutput,
    ShiftDetector,
)
from todeval.nodes.goal_shift.judges.shift_detection_local import LocalShiftDetector
from todeval.nodes.judges import check_spec
from todeval.nodes.judges.roles import JudgeRole
from todeval.nodes.judges.validity import register_cards
from todeval.nodes.prompts.goal_shift import (
    NL_ASSERTION_PROMPT,
    NL_ASSERTION_SYSTEM_PROMPT,
    SHIFT_DETECTION_PROMPT,
    SHIFT_DETECTION_SYSTEM_PROMPT,
)

SHIFT_DETECTION: JudgeRole[ShiftDetector] = JudgeRole(
    name="shift_detection",
    decides="where the user shifts to the next goal and when the agent acknowledges it, "
    "uses a tool for it and delivers it (Appendix G)",
    local={"default": LocalShiftDetector},
    prompt=SHIFT_DETECTION_PROMPT,
    output_model=ShiftDetectionOutput,
    system=SHIFT_DETECTION_SYSTEM_PROMPT,
    llm=LLMShiftDetector,
)

NL_ASSERTION: JudgeRole[NLAssertionJudge] = JudgeRole(
    name="nl_assertion",
    decides="whether the agent met each of the task's natural-language assertions (TSR)",
    local={"default": LocalNLAssertionJudge},
    prompt=NL_ASSERTION_PROMPT,
    output_model=NLAssertionOutput,
    system=NL_ASSERTION_SYSTEM_PROMPT,
    llm=LLMNLAssertionJudge,
)

register_cards(NL_ASSERTION.name, NL_ASSERTION_CARDS)


def check_goal_shift_judges(shift_detection: str, nl_assertion: str) -> None:
    """Fail on a bad spec before any conversation is read (the judges build lazily).

    Raises:
        JudgeSpecError: A spec is malformed or names an unknown local variant.
    """
    check_spec(SHIFT_DETECTION.name, shift_detection)
    check_spec(NL_ASSERTION.name, nl_assertion)
