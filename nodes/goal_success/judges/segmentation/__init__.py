"""The goal-segmentation judge role: ``is_new_goal`` for every turn (paper 004, Section 4.1).

Three judges share one interface, :class:`SegmentationJudge`:

* ``local`` / ``local:learned`` - a small classifier on MiniLM features and cue flags
  (:mod:`nodes.goal_success.judges.segmentation.features`), trained on SGD train by ``make
  train-segmenter``.
* ``local:rules`` - the same cues and embedding similarities combined by hand, no training:
  a transparent baseline and a fallback for domains far from SGD.
* ``<provider>:<model>`` - the paper's Appendix D prompt through :class:`LLMJudge`; given the
  domain's business rules (``Context.teacher_sop``) it sends them as the LLM teachers do, so a
  teacher with the same spec still reads its answer from the response cache.
"""

from __future__ import annotations

import functools
from pathlib import Path

import todeval.nodes.goal_success.judges.segmentation.local  # noqa: F401  (registers the local judges)
from todeval.nodes.goal_success.judges.segmentation.llm import LLMSegmenter
from todeval.nodes.goal_success.judges.segmentation.role import ROLE, SegmentationJudge
from todeval.nodes.judges import resolve_judge
from todeval.nodes.judges.validity import register_cards

register_cards(ROLE, Path(__file__).parent / "validity.json")


@functools.lru_cache(maxsize=16)
def segmentation_judge(
    spec: str, max_retries: int = 3, context_tokens: int = 8192, business_rules: str = ""
) -> SegmentationJudge:
    """The judge for ``spec`` (built once per spec and rules; raises on unknown specs).

    ``business_rules`` (the SOP text) reach only an LLM segmenter; local ones ignore them.
    """
    judge: SegmentationJudge = resolve_judge(
        ROLE,
        spec,
        lambda parsed: LLMSegmenter(
            parsed,
            max_retries=max_retries,
            context_tokens=context_tokens,
            business_rules=business_rules,
        ),
    )
    return judge


__all__ = ["segmentation_judge"]
