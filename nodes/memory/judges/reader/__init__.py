"""The reader role: MAP's confirmation response ``r = LLM_Reader(c, A_core)`` (paper 001, §4.3).

What the reader sees. Eq. 5 gives the reader the context ``c`` and the refined core answers
``A_core``; the Figure 9 prompt also has a ``[TASK GOAL]`` block, "task goals identified in the
dialogue". Filling that block with the gold task goal would hand the reader the answer the
benchmark scores, so here it holds only what the dialogue identifies: the intent and the slot
values the context states (``task_goal_hint``, from intent capture). Never the gold values.

* ``local``: a template confirmation stating the intent in words and, per slot, the value the
  context states (intent capture reads it, in natural wording too: "Yes, I want trip
  insurance", "a table for one", "quarter past 1 in the afternoon"), else the first
  (best-ranked) value memory holds, else the schema's default: "Just to confirm, you'd like
  to reserve restaurant with the restaurant name Gen Korean BBQ House, the location Milpitas and
  the time 12:15 pm. Is that correct?". Memory is read from units' ``slot``/``value`` or from
  answers worded ``"The {slot} was {value}."``; other answers are quoted as they are. An ISO
  date (a schema default) is said as "March 1st".
* ``<provider>:<model>``: Figure 9 through :class:`LLMJudge`.

:func:`confirmation_scorer` (:mod:`nodes.memory.judges.confirmation_score`, re-exported here) is the
Figure 11 GPT-4 score of a confirmation response: LLM only; a local spec answers ``None`` with a
reason (no local judge invents that score).
"""

from __future__ import annotations

import functools

from todeval.nodes.judges.spec import JudgeSpecError, parse_spec
from todeval.nodes.memory.judges.reader.llm import LLMReader
from todeval.nodes.memory.judges.reader.local import LocalReader
from todeval.nodes.memory.judges.reader.role import ROLE, MemoryReader


@functools.lru_cache(maxsize=8)
def memory_reader(spec: str = "local") -> MemoryReader:
    """The reader for ``spec``: ``local`` or an LLM spec.

    Raises:
        JudgeSpecError: The spec is malformed or names an unknown local variant.
    """
    parsed = parse_spec(spec)
    if not parsed.is_local:
        return LLMReader(parsed)
    if parsed.variant not in (None, "default", "template"):
        raise JudgeSpecError(f"{ROLE}: no local variant {parsed.variant!r}")
    return LocalReader()


__all__ = ["memory_reader"]
