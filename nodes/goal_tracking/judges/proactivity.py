"""The proactivity role's judges: is a proactive action appropriate and beneficial (ATOD §6.2)?

Input: a :class:`~evals.metrics.goal_tracking.proactive_actions.ProactiveAction`. Output: True
(contextually appropriate and beneficial), False, or None with the reason (no evidence).

``local`` (:class:`LocalProactivityJudge`): the user's reaction and the goal's outcome decide, a
stand-in for the LLM judge. An action is judged *not* appropriate when the user's next utterance
pushes it back (it opens with a refusal: "no", "not now", "I didn't ask", "never mind"...), and
*not* beneficial when the goal it brought up ends failed or abandoned; otherwise it is appropriate
and beneficial. With no user reaction (the dialogue ends) only a settled goal decides: completed
-> True, failed or abandoned -> False, else no verdict. These are the paper's criteria read from
what the dialogue shows, not an understanding of the utterance: an LLM spec judges the wording.
"""

from __future__ import annotations

import re
from typing import Protocol

from pydantic import BaseModel, Field

from todeval.evals.metrics.goal_tracking.proactive_actions import ProactiveAction
from todeval.nodes.judges.result import JudgeResult
from todeval.nodes.judges.roles import PromptJudge

PUSHBACK = re.compile(
    r"^\W*(no\b(?!\s+problem)|nope|nah|not now|not yet|not really|i didn'?t ask|i did not ask|"
    r"don'?t|do not|stop|never ?mind|that'?s not what|why would|leave it|forget it)",
    re.IGNORECASE,
)
"""A reaction that opens by pushing the action back."""

UNHELPFUL_OUTCOMES = frozenset({"failed", "abandoned"})


class ProactivityJudge(Protocol):
    """Anything that judges a proactive action."""

    name: str

    def judge(self, action: ProactiveAction) -> JudgeResult[bool]:
        """The verdict, or None with the reason."""
        ...


class ProactivityOutput(BaseModel):
    """The prompt's JSON."""

    appropriate: bool = Field(description="Timely and relevant to the user's goals.")
    beneficial: bool = Field(description="It moved the user's goals forward.")
    reason: str = Field(default="", description="One sentence why.")


class LocalProactivityJudge:
    """Reaction and outcome rules (module doc)."""

    name = "local"

    def judge(self, action: ProactiveAction) -> JudgeResult[bool]:
        """The verdict from the reaction and the outcome."""
        if action.reaction is not None and PUSHBACK.search(action.reaction):
            return JudgeResult(False, self.name, "the user pushed it back")
        if action.final_status in UNHELPFUL_OUTCOMES:
            return JudgeResult(False, self.name, f"the goal ended {action.final_status}")
        if action.reaction is None and action.final_status != "completed":
            return JudgeResult(None, self.name, "no user reaction and the goal is not settled")
        return JudgeResult(True, self.name, "taken up, and the goal was not lost")


class LLMProactivityJudge(PromptJudge[ProactivityOutput]):
    """The proactivity prompt (one call per action) through one LLM spec."""

    def judge(self, action: ProactiveAction) -> JudgeResult[bool]:
        """Appropriate and beneficial, or None with the reason the call failed."""
        result = self.ask(
            context=action.context, kind=action.kind, goal=action.goal, status=action.status,
            utterance=action.utterance, reaction=action.reaction or "(the dialogue ends)",
            final_status=action.final_status,
        )  # fmt: skip
        if result.value is None:
            return JudgeResult(None, self.name, result.reason)
        verdict = result.value.appropriate and result.value.beneficial
        return JudgeResult(verdict, self.name, result.value.reason or None)
