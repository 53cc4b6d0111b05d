"""The two judge roles of MAP's proactive slot repair loop (paper 001, §4.3): their interface.

``repair_agent`` (the agent under test) reads a :class:`RepairRequest` and speaks an
:class:`AgentTurn`; ``supervisor_judge`` finds L and, after each exchange, the slots it resolved.
The implementations are in :mod:`nodes.memory.judges.slot_repair.local` and
:mod:`nodes.memory.judges.slot_repair.llm`; :mod:`nodes.memory.judges.slot_repair` resolves specs to
them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from todeval.evals.memory_schema import MsTodTurn
from todeval.nodes.judges.result import JudgeResult

__all__ = [
    "AGENT_ROLE",
    "SUPERVISOR_ROLE",
    "AgentTurn",
    "RepairAgent",
    "RepairRequest",
    "Supervisor",
]

AGENT_ROLE = "repair_agent"
SUPERVISOR_ROLE = "supervisor_judge"


@dataclass(frozen=True)
class RepairRequest:
    """What the agent under test sees before a repair turn.

    Attributes:
        context: The session's turns before the confirmation response.
        response: The confirmation response r being repaired.
        pending_slots: The slots still in L (names only).
        exchange: The repair turns so far (agent and user, alternating).
        last_user_values: Slot -> value the user's last reply stated (the local agent's
            stand-in for understanding the user; LLM agents read ``exchange``).
        intent: The task's intent (``ReserveRestaurant``), when known.
    """

    context: Sequence[MsTodTurn]
    response: str
    pending_slots: Sequence[str]
    exchange: Sequence[MsTodTurn] = ()
    last_user_values: Mapping[str, str] = field(default_factory=dict)
    intent: str | None = None


@dataclass(frozen=True)
class AgentTurn:
    """One repair turn of the agent under test.

    Attributes:
        utterance: What the agent says; empty when an LLM agent failed.
        asked_slots: The slots the turn asks about or confirms.
        judge: The spec that spoke.
        reason: Why ``utterance`` is empty.
    """

    utterance: str
    asked_slots: list[str]
    judge: str
    reason: str | None = None


class RepairAgent(Protocol):
    """The ``repair_agent`` role."""

    name: str

    def speak(self, request: RepairRequest) -> AgentTurn:
        """The agent's next repair turn."""
        ...


class Supervisor(Protocol):
    """The ``supervisor_judge`` role."""

    name: str

    def missing_or_wrong(
        self, response: str, task_goal: Mapping[str, str], context: Sequence[MsTodTurn]
    ) -> JudgeResult[list[str]]:
        """L: the task-goal slots the response omits or states wrongly, in goal order."""
        ...

    def resolved(
        self,
        task_goal: Mapping[str, str],
        pending: Sequence[str],
        agent_utterance: str,
        user_utterance: str,
    ) -> JudgeResult[list[str]]:
        """The slots of ``pending`` that this exchange resolved."""
        ...
