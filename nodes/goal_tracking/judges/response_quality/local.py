"""``local``: no local judge scores response quality, so the answer is None with the reason.

Relevance and coherence are judgements about the wording that the paper gives to an LLM
(G-Eval); nothing in todeval's local models measures them, and a made-up score would be worse
than none.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from todeval.nodes.goal_tracking.judges.response_quality.role import ROLE, ResponseQuality
from todeval.nodes.judges.local import register_local_judge
from todeval.nodes.judges.result import JudgeResult

REASON = (
    "response quality (G-Eval relevance and coherence) needs an LLM judge: "
    "give response_quality an LLM spec"
)


class LocalResponseQuality:
    """Says why it cannot score."""

    name = "local"

    def score(self, utterances: Sequence[Mapping[str, Any]]) -> JudgeResult[ResponseQuality]:
        """None with :data:`REASON`."""
        return JudgeResult(None, self.name, REASON)


@register_local_judge(ROLE, "default", default=True)
def _local_response_quality() -> LocalResponseQuality:
    return LocalResponseQuality()
