"""Response quality (ATOD, paper 000, §6.3): turn-level relevance and dialogue-level coherence.

Each dialogue's scores come from the ``response_quality`` judge role (G-Eval style, 1-5) as
``{"turn_level", "dialogue_level", "reason"}``; the corpus figure is their mean over the
dialogues that were scored. The local role scores nothing, so the figure is None with its
reason (the most frequent one a dialogue gave).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from evals.metrics.goal_tracking.goal_records import mean_or_none, round4


def response_quality_row(scores: Mapping[str, Any] | None) -> dict[str, float | None]:
    """A dialogue's ``turn_quality`` and ``dialogue_quality`` (None when not scored)."""
    scores = scores or {}
    return {
        "turn_quality": scores.get("turn_level"),
        "dialogue_quality": scores.get("dialogue_level"),
    }


def response_quality_report(
    rows: Sequence[Mapping[str, Any]], reasons: Counter[str]
) -> dict[str, Any]:
    """``{"turn_level", "dialogue_level", "n_dialogues", "reason"}`` over the scored dialogues."""
    turn = [float(r["turn_quality"]) for r in rows if r.get("turn_quality") is not None]
    dialogue = [float(r["dialogue_quality"]) for r in rows if r.get("dialogue_quality") is not None]
    reason = None
    if not dialogue:
        reason = reasons.most_common(1)[0][0] if reasons else "no response-quality judge ran"
    return {
        "turn_level": round4(mean_or_none(turn)),
        "dialogue_level": round4(mean_or_none(dialogue)),
        "n_dialogues": len(dialogue),
        "reason": reason,
    }
