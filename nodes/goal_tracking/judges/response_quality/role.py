"""The response-quality role (paper 000, §6.3): G-Eval-style relevance and coherence.

Input: a dialogue's utterances (``{"speaker", "text"}``). Output: :class:`ResponseQuality`
(``turn_level``: the mean relevance of the system's turns, ``dialogue_level``: coherence, both
on G-Eval's 1-5 scale), or None with the reason.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from todeval.nodes.judges.result import JudgeResult

ROLE = "response_quality"


@dataclass(frozen=True)
class ResponseQuality:
    """One dialogue's response quality.

    Attributes:
        turn_level: Mean relevance (1-5) over the system's turns.
        dialogue_level: Coherence (1-5) of the whole dialogue.
        relevance: Turn (1-based utterance) -> relevance score.
    """

    turn_level: float
    dialogue_level: float
    relevance: dict[int, int]


class ResponseQualityJudge(Protocol):
    """Anything that scores a dialogue's responses."""

    name: str

    def score(self, utterances: Sequence[Mapping[str, Any]]) -> JudgeResult[ResponseQuality]:
        """The scores, or None with the reason."""
        ...
