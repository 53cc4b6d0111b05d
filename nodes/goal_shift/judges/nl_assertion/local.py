"""The local NL-assertion judge: settles only assertions about a transfer to a human.

Every other assertion is null with the reason (an LLM spec judges them all).
"""

from __future__ import annotations

import re

from todeval.evals.goal_shift_schema import Conversation, NLAssertionJudgment
from todeval.nodes.goal_shift.judges.nl_assertion.role import (
    NOT_CHECKABLE,
    ROLE,
    NLVerdict,
    _unjudged,
)
from todeval.nodes.goal_shift.judges.shift_detection.role import TRANSFER_TOOL
from todeval.nodes.judges.local import register_local_judge

_TRANSFER = re.compile(r"\btransferr?(ed|ing|s)?\b.*\bhuman\b", re.IGNORECASE)

_NEGATED = re.compile(r"\b(not|never|no|without|didn't|did not|avoid(ed)?)\b", re.IGNORECASE)


class LocalNLAssertionJudge:
    """Checks transfer-to-human assertions from the tool calls; abstains on everything else."""

    name = "local"

    def judge(self, conversation: Conversation) -> NLVerdict:
        """Judge what the tool calls settle; the rest stays ``None`` with a reason."""
        assertions = conversation.task.nl_assertions if conversation.task else []
        transfers = [
            m.turn
            for m in conversation.messages
            if m.role == "assistant" and any(c.name == TRANSFER_TOOL for c in m.tool_calls)
        ]
        judgments = []
        for assertion in assertions:
            if not _TRANSFER.search(assertion):
                judgments.append(_unjudged([assertion], NOT_CHECKABLE)[0])
                continue
            negated = bool(_NEGATED.search(assertion))
            met = not transfers if negated else bool(transfers)
            why = (
                f"transfer_to_human_agents called at turns {transfers}"
                if transfers
                else "transfer_to_human_agents was never called"
            )
            judgments.append(
                NLAssertionJudgment(nl_assertion=assertion, met=met, justification=why)
            )
        return NLVerdict(judgments, self.name)


@register_local_judge(ROLE, "default", default=True)
def _local_nl_judge() -> LocalNLAssertionJudge:
    return LocalNLAssertionJudge()
