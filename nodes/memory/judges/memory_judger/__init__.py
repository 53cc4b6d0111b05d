"""The memory judger role: does a QA memory unit contribute to the task goal? (paper 001, §4.2).

MAP scores each activated unit with ``s = P(y=1 | c_i, q_miss, (q, a))`` (Eq. 2), a model trained
with cross-entropy (Eq. 3), then re-ranks by ``alpha * s_retrieval + (1 - alpha) * s``.

* ``local`` (= ``local:learned``): a one-hidden-layer MLP (:mod:`nodes.judges.classifier`) on
  relational MiniLM features of the unit and the context (:func:`judger_features`): how close its
  question is to the missing-slot questions, how close its session's intent description and its
  answer are to the context, how much of what the description names (beyond the intent) the
  context says, and the same relative to the other activated units (so a same-intent sibling
  session loses to the one the user names). No feature names a slot, intent or service, so it
  transfers to unseen ones.
  ``scripts/train_memory_judger.py`` trains it on MS-TOD-style items built from SGD train.
* ``<provider>:<model>``: :data:`MEMORY_JUDGER_PROMPT` per unit through :class:`LLMJudge`; a unit
  whose answer cannot be read scores ``None``.
* ``none``: no judger (:func:`memory_judger` returns ``None``); the re-rank keeps ``s_retrieval``.
"""

from __future__ import annotations

import functools

import todeval.nodes.memory.judges.memory_judger.local  # noqa: F401  (registers the local judger)
from todeval.nodes.judges import resolve_judge
from todeval.nodes.memory.judges.memory_judger.llm import LLMMemoryJudger
from todeval.nodes.memory.judges.memory_judger.role import ROLE, MemoryJudger


@functools.lru_cache(maxsize=8)
def memory_judger(spec: str = "local") -> MemoryJudger | None:
    """The memory judger for ``spec``: ``local``, an LLM spec, or ``none`` (no judger).

    The local model is loaded on first :meth:`~LocalMemoryJudger.score`, not here.

    Raises:
        JudgeSpecError: The spec is malformed or names an unknown local variant.
    """
    if spec.strip().lower() == "none":
        return None
    judger: MemoryJudger = resolve_judge(ROLE, spec, lambda parsed: LLMMemoryJudger(parsed))
    return judger


__all__ = ["memory_judger"]
