"""What the target-reached check returns after each dialogue-guidance turn (early stop).

The paper lets its simulated user (GPT-4o) decide at the end of each turn whether the target is
reached; it prints no prompt for it, so the check is todeval's own. ``reached`` is None (with
the reason) when the judge could not decide; the dialogue then goes on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from todeval.evals.proactive_schema import ChatMessage, TargetPlan

ROLE = "target_reached"


@dataclass(frozen=True)
class ReachedVerdict:
    """Whether the user reached the target, who decided and why."""

    reached: bool | None
    judge: str
    reason: str

    def as_dict(self) -> dict[str, Any]:
        """The verdict as plain data (checkpoints, result lines)."""
        return asdict(self)


class TargetReachedJudge(Protocol):
    """Anything that decides whether a guidance dialogue has reached its target."""

    name: str

    def check(self, reference: TargetPlan, messages: Sequence[ChatMessage]) -> ReachedVerdict:
        """The verdict on the conversation so far (the user's message last)."""
        ...
