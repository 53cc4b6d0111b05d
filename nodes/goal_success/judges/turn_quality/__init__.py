"""The teacher role, ``turn_quality``: ``quality``, ``rcof`` and a rationale per turn (paper 004).

* ``local:response`` (= ``local``), ``local:signals``, ``local:semantic`` - three local teachers
  that read different evidence (the response itself, the user's reactions, answer-question fit);
  see their modules.
* ``local:turn``, ``local:reply-reaction``, ``local:fit-reaction`` - three learned teachers, each
  reading two of the reply, its fit to the request and the user's reaction (:mod:`.learned`).
* ``<provider>:<model>`` - the paper's Appendix D prompt (canonical RCOF codes) through
  :class:`LLMJudge`, reasoning in ``<think>`` tags stripped, JSON validated into pydantic.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import todeval.nodes.goal_success.judges.turn_quality.learned
import todeval.nodes.goal_success.judges.turn_quality.local_response
import todeval.nodes.goal_success.judges.turn_quality.local_semantic
import todeval.nodes.goal_success.judges.turn_quality.local_signals  # noqa: F401  (registers the local teachers)
from todeval.nodes.goal_success.judges.turn_quality.llm import LLMTeacher
from todeval.nodes.goal_success.judges.turn_quality.role import (
    ROLE,
    TurnQualityTeacher,
)
from todeval.nodes.judges import resolve_judge
from todeval.nodes.judges.validity import register_cards

register_cards(ROLE, Path(__file__).parent / "validity.json")


@functools.lru_cache(maxsize=32)
def turn_quality_teacher(
    spec: str, max_retries: int = 3, context_tokens: int = 8192, business_rules: str = ""
) -> TurnQualityTeacher:
    """The teacher for ``spec`` (built once per spec and rules; raises on unknown specs).

    ``business_rules`` (the SOP text) reach only LLM teachers; local ones ignore them.
    """
    teacher: Any = resolve_judge(
        ROLE,
        spec,
        lambda parsed: LLMTeacher(
            parsed,
            max_retries=max_retries,
            context_tokens=context_tokens,
            business_rules=business_rules,
        ),
    )
    result: TurnQualityTeacher = teacher
    return result


__all__ = ["turn_quality_teacher"]
