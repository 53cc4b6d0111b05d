"""``local``: a rule-based target-reached check (todeval's own; a stand-in for the paper's GPT-4o).

Reached when the agent has put the final step to the user (a message raised the last sub-target
or the target itself: most of its content words, :func:`~nodes.proactive.text.raised_sub_targets`)
and the user's last message agrees without hedging afterwards ("Fine, I'll grab one"; not
"maybe", "why?", "no promises"). Agreement to an earlier step is not the target. On the
team-labelled dialogues it agrees with the labels at Cohen's kappa 0.43 (in-sample: the agreement
words were extended after reading them; see ``bench/proactive.py``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from todeval.evals.proactive_schema import ChatMessage, TargetPlan
from todeval.nodes.judges.local import register_local_judge
from todeval.nodes.proactive.judges.target_reached.role import ROLE, ReachedVerdict
from todeval.nodes.proactive.text import raised_sub_targets

AGREES = re.compile(
    r"\b(sure|ok(ay)?|yes|yeah|yep|fine|alright|all right|deal|done|got it|go on|go for it|"
    r"go ahead|perfect|send it|thanks|thank you|all good|heading|let'?s|i'?ll|i will|"
    r"sounds (good|great|like a plan)|convinced|you'?ve got me|great idea|count me in|"
    r"sign me up)\b",
    re.IGNORECASE,
)
HEDGES = re.compile(
    r"\?|\b(no thanks|not (now|really|interested|sure|convinced)|never|maybe|might|perhaps|"
    r"rather not|don'?t|won'?t|why|unless|think about|i guess|no promises|pass)\b",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def agrees(text: str) -> bool:
    """A sentence agrees without hedging, and no later sentence hedges."""
    sentences = [s for s in _SENTENCE.split(text.strip()) if s]
    for index, sentence in enumerate(sentences):
        if AGREES.search(sentence) and not HEDGES.search(sentence):
            return not any(HEDGES.search(later) for later in sentences[index + 1 :])
    return False


class LocalTargetReached:
    """See the module docstring."""

    name = "local"

    def check(self, reference: TargetPlan, messages: Sequence[ChatMessage]) -> ReachedVerdict:
        """The final step put to the user, and the user's last word agrees."""
        final = [*reference.sub_target[-1:], reference.target]
        agent = [m.content for m in messages if m.role == "assistant"]
        proposed = any(raised_sub_targets(final, text) for text in agent)
        last = next((m.content for m in reversed(messages) if m.role == "user"), "")
        if not proposed:
            return ReachedVerdict(False, self.name, "the final step has not been put yet")
        if not agrees(last):
            return ReachedVerdict(False, self.name, "the user has not agreed yet")
        return ReachedVerdict(True, self.name, "the final step was put and the user agreed")


@register_local_judge(ROLE, "default", default=True)
def _local_reached() -> LocalTargetReached:
    return LocalTargetReached()
