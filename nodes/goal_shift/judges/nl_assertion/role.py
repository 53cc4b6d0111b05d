"""What the NL-assertion judge returns: met / not met / null with a reason per assertion (TSR)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from todeval.evals.goal_shift_schema import Conversation, NLAssertionJudgment

ROLE = "nl_assertion"

NOT_CHECKABLE = (
    "the local judge cannot check this assertion honestly; use an LLM judge "
    "(--judge) or reuse stored judgments"
)


@dataclass(frozen=True)
class NLVerdict:
    """Per assertion, a judgment (``met=None`` when not judged), and who judged."""

    judgments: list[NLAssertionJudgment]
    judge: str
    reason: str | None = None


class NLAssertionJudge(Protocol):
    """Anything that judges a conversation's natural-language assertions."""

    name: str

    def judge(self, conversation: Conversation) -> NLVerdict:
        """One judgment per assertion of the conversation's task, in order."""
        ...


def _unjudged(assertions: Sequence[str], reason: str) -> list[NLAssertionJudgment]:
    return [NLAssertionJudgment(nl_assertion=a, met=None, justification=reason) for a in assertions]
