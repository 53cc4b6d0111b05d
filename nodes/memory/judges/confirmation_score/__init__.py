"""The Figure 11 "GPT-4 score" of a confirmation response (paper 001, App. A.4).

The paper scores the reader's confirmation response from 1 to 10 with GPT-4, given the context,
the gold task goal and the reference response. LLM only: :func:`confirmation_scorer` answers a
local spec with a scorer that always returns ``None`` and the reason (no local judge invents that
score). :mod:`nodes.memory.judges.reader` re-exports this module's public names.
"""

from __future__ import annotations

import functools

from todeval.nodes.judges.spec import parse_spec
from todeval.nodes.memory.judges.confirmation_score.llm import LLMConfirmationScorer
from todeval.nodes.memory.judges.confirmation_score.local import LocalConfirmationScorer
from todeval.nodes.memory.judges.confirmation_score.role import ConfirmationScorer


@functools.lru_cache(maxsize=8)
def confirmation_scorer(spec: str = "local") -> ConfirmationScorer:
    """The Figure 11 scorer for ``spec`` (a local spec scores ``None``, with a reason).

    Raises:
        JudgeSpecError: The spec is malformed.
    """
    parsed = parse_spec(spec)
    if parsed.is_local:
        return LocalConfirmationScorer(parsed.raw)
    return LLMConfirmationScorer(parsed)


__all__ = ["confirmation_scorer"]
