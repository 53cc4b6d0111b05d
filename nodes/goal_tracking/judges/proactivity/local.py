"""``local``: the user's reaction and the goal's outcome decide (a stand-in for the LLM judge).

An action is judged *not* appropriate when the user's next utterance pushes it back (it opens
with a refusal: "no", "not now", "I didn't ask", "never mind"...), and *not* beneficial when the
goal it brought up ends failed or abandoned; otherwise it is appropriate and beneficial. With no
user reaction (the dialogue ends) only a settled goal decides: completed -> True, failed or
abandoned -> False, else no verdict. These are the paper's criteria read from what the dialogue
shows, not an understanding of the utterance: an LLM spec judges the wording itself.
"""

from __future__ import annotations

import re

from todeval.evals.metrics.goal_tracking.proactive_actions import ProactiveAction
from todeval.nodes.goal_tracking.judges.proactivity.role import ROLE
from todeval.nodes.judges.local import register_local_judge
from todeval.nodes.judges.result import JudgeResult

PUSHBACK = re.compile(
    r"^\W*(no\b(?!\s+problem)|nope|nah|not now|not yet|not really|i didn'?t ask|i did not ask|"
    r"don'?t|do not|stop|never ?mind|that'?s not what|why would|leave it|forget it)",
    re.IGNORECASE,
)
"""A reaction that opens by pushing the action back."""

UNHELPFUL_OUTCOMES = frozenset({"failed", "abandoned"})


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


@register_local_judge(ROLE, "default", default=True)
def _local_proactivity_judge() -> LocalProactivityJudge:
    return LocalProactivityJudge()
