"""The judge roles of MAP's proactive slot repair loop (paper 001, §4.3).

- ``repair_agent``: the agent under test. Given the context, its confirmation response r, the
  set L of slots still to fix (names only, never the gold values) and the repair so far, it
  speaks. ``local`` (= ``local:proactive``) acknowledges the values the user just gave and asks
  about every slot left in L, by name in words; ``local:passive`` never asks (a floor: it can
  only succeed if the user volunteers); an LLM spec answers
  :data:`~nodes.prompts.memory.REPAIR_AGENT_PROMPT`.
- ``supervisor_judge``: finds L (:meth:`Supervisor.missing_or_wrong`: the task-goal slots the
  response omits or states wrongly) and, after each exchange, the slots of L it resolved
  (:meth:`Supervisor.resolved`). ``local`` uses
  :func:`evals.metrics.memory.scores.slot_value_mentioned`: a slot is missing when the response does
  not mention its gold value, and resolved when the user's reply or the agent's turn mentions
  it, so a slot answered with a wrong value stays in L. An LLM spec answers
  :data:`~nodes.prompts.memory.MISSING_SLOTS_PROMPT` /
  :data:`~nodes.prompts.memory.SUPERVISOR_PROMPT`.

This module resolves specs to judges (:func:`repair_agent`, :func:`supervisor`) and re-exports the
roles' interface (:mod:`nodes.memory.judges.slot_repair.role`), the local judges
(:mod:`nodes.memory.judges.slot_repair.local`, registered on import) and the LLM ones
(:mod:`nodes.memory.judges.slot_repair.llm`). The user simulator is its own package
(:mod:`nodes.simulation.users`). A judge that cannot judge returns ``value=None``
with a reason; slot names an LLM invents are dropped.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence

import todeval.nodes.memory.judges.slot_repair.local  # noqa: F401  (registers the local judges)
from todeval.evals.memory_schema import MsTodTurn
from todeval.nodes.judges import resolve_judge
from todeval.nodes.judges.result import JudgeResult
from todeval.nodes.memory.judges.slot_repair.llm import (
    LLMRepairAgent,
    LLMSupervisor,
)
from todeval.nodes.memory.judges.slot_repair.role import (
    AGENT_ROLE,
    SUPERVISOR_ROLE,
    RepairAgent,
    Supervisor,
)


@functools.lru_cache(maxsize=16)
def repair_agent(spec: str, max_retries: int = 3) -> RepairAgent:
    """The agent under test for ``spec`` (built once per spec; raises on unknown specs)."""
    agent: RepairAgent = resolve_judge(
        AGENT_ROLE, spec, lambda parsed: LLMRepairAgent(parsed, max_retries=max_retries)
    )
    return agent


@functools.lru_cache(maxsize=16)
def supervisor(spec: str, max_retries: int = 3) -> Supervisor:
    """The supervisor for ``spec`` (built once per spec; raises on unknown specs)."""
    judge: Supervisor = resolve_judge(
        SUPERVISOR_ROLE, spec, lambda parsed: LLMSupervisor(parsed, max_retries=max_retries)
    )
    return judge


def missing_or_wrong_slots(
    response: str,
    task_goal: Mapping[str, str],
    *,
    spec: str = "local",
    context: Sequence[MsTodTurn] = (),
) -> JudgeResult[list[str]]:
    """L for a response: the task-goal slots it omits or states wrongly (MAP §4.3).

    Args:
        response: The confirmation response r.
        task_goal: Slot -> gold value.
        spec: The ``supervisor_judge`` spec.
        context: The turns before the response (LLM supervisors read them).

    Returns:
        The slots in goal order, or ``value=None`` with a reason when the judge failed.
    """
    return supervisor(spec).missing_or_wrong(response, task_goal, context)


__all__ = ["missing_or_wrong_slots", "repair_agent", "supervisor"]
