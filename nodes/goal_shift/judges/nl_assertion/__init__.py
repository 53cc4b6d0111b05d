"""The NL-assertion judge role: does the transcript meet each of the task's assertions?

Feeds TSR's nl_assertion channel when stored judgments are absent or not reused.

* ``<provider>:<model>`` - :data:`~nodes.prompts.goal_shift.NL_ASSERTION_PROMPT` through
  :class:`LLMJudge`, one call per conversation; an assertion the model leaves out is not judged.
* ``local`` - :class:`LocalNLAssertionJudge` checks only what the transcript settles without
  reading intent: assertions about transferring the user to a human agent (answered from the
  ``transfer_to_human_agents`` calls). Every other assertion is ``met=None`` with a reason, and
  the channel is computed over the judged ones (or dropped from TSR when none is judged).
"""

from __future__ import annotations

import functools

import todeval.nodes.goal_shift.judges.nl_assertion.local  # noqa: F401  (registers the local judge)
from todeval.nodes.goal_shift.judges.nl_assertion.llm import LLMNLAssertionJudge
from todeval.nodes.goal_shift.judges.nl_assertion.role import ROLE, NLAssertionJudge
from todeval.nodes.judges import resolve_judge


@functools.lru_cache(maxsize=16)
def nl_assertion_judge(spec: str, max_retries: int = 3) -> NLAssertionJudge:
    """The judge for ``spec`` (built once per spec; raises on unknown specs)."""
    judge: NLAssertionJudge = resolve_judge(
        ROLE, spec, lambda parsed: LLMNLAssertionJudge(parsed, max_retries=max_retries)
    )
    return judge


__all__ = ["nl_assertion_judge"]
