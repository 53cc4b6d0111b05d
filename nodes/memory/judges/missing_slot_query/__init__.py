"""The missing-slot query of memory-guided dialogue planning (paper 001, §4.2, Figure 8).

MAP hypothesises with chain-of-thought prompting the missing slot query ``q_miss``: what the
memory must supply for the session's intent. The ``missing_slot_query`` role:

* ``local``: the intent's task attributes (:func:`~nodes.memory.judges.planning.
  task_attributes`) that the context does not fill, each asked as a third-person question
  (Figure 8's rules, :func:`missing_question`).
* ``<provider>:<model>``: Figure 8 with chain of thought (:data:`MISSING_SLOT_QUERY_PROMPT`).

Every result records the judge spec; a judge that cannot answer returns ``None`` with a reason.
:mod:`nodes.memory.judges.planning` re-exports this module's public names.
"""

from __future__ import annotations

import functools

from todeval.nodes.judges.spec import JudgeSpecError, parse_spec
from todeval.nodes.memory.judges.missing_slot_query.llm import LLMMissingSlotQuery
from todeval.nodes.memory.judges.missing_slot_query.local import LocalMissingSlotQuery
from todeval.nodes.memory.judges.missing_slot_query.role import MISSING_ROLE, MissingSlotQuerier


@functools.lru_cache(maxsize=8)
def missing_slot_querier(spec: str = "local") -> MissingSlotQuerier:
    """The missing-slot query judge for ``spec`` (built once per spec).

    Raises:
        JudgeSpecError: The spec is malformed or an unknown local variant.
    """
    parsed = parse_spec(spec)
    if not parsed.is_local:
        return LLMMissingSlotQuery(parsed)
    if parsed.variant not in (None, "default"):
        raise JudgeSpecError(f"{MISSING_ROLE}: no local variant {parsed.variant!r}")
    return LocalMissingSlotQuery()


__all__ = ["missing_slot_querier"]
