"""The bank builder role: QA memory units of a stored session (MAP, paper 001, §3.2, App. B.4).

A session becomes an intent description ``k_i`` and QA pairs ``v_i = {(q_ij, a_ij)}``, one per
task attribute (Figure 13). The paper builds them with GPT-4 (:class:`LLMMemoryBankBuilder`
reads the session's dialogue and task goal); :class:`LocalMemoryBankBuilder` writes one unit per
slot, deterministic and offline, from the slot values the dialogue says
(:mod:`~nodes.memory.judges.dialogue_values`, the default ``bank_source``) or, as a named
oracle, from the task goal (``task_goal_oracle``:
:func:`~nodes.memory.judges.units.local_memory_units`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from todeval.evals.datasets.sgd_schema import ServiceSchema
from todeval.evals.memory_schema import Individual, MemoryUnit, MsTodSession
from todeval.evals.memory_words import intent_in_words
from todeval.nodes.judges.provider_options import bounded_schema
from todeval.nodes.judges.result import JudgeResult
from todeval.nodes.judges.roles import PromptJudge
from todeval.nodes.memory.judges.dialogue_values import dialogue_slot_values
from todeval.nodes.memory.judges.units import (
    local_memory_units,
    memory_unit_id,
    render_context,
    render_slot_values,
    slot_units,
)
from todeval.nodes.memory.settings import BankSource


class QAPair(BaseModel):
    """One question/answer pair of the QA memory (Figure 13)."""

    model_config = ConfigDict(populate_by_name=True)

    question: str = Field(alias="Question", min_length=1, description="Third-person question.")
    answer: str = Field(alias="Answer", min_length=1, description="One sentence with the value.")
    slot: str | None = Field(
        default=None, alias="Slot", description="The task goal attribute asked about, or null."
    )


class SessionMemory(BaseModel):
    """An LLM's intent description and QA memory of one session (Figure 13)."""

    intent_description: str = Field(min_length=1, description="The session's intent, k_i.")
    qa_summary: list[QAPair] = Field(description="The QA pairs v_i, one per task attribute.")


#: A session has a handful of facts: bounded, a small model cannot loop on one QA pair.
SESSION_MEMORY_SCHEMA = bounded_schema(SessionMemory, max_chars=120, max_items=8)


class MemoryBankBuilder(Protocol):
    """Turns a stored session into QA memory units (the ``memory_bank`` role)."""

    name: str

    def build(self, individual_id: str, session: MsTodSession) -> JudgeResult[list[MemoryUnit]]:
        """The session's units, or ``value=None`` with a reason when they cannot be built."""
        ...


class LocalMemoryBankBuilder:
    """``local`` (= ``local:slots``): one unit per slot the source gives (module doc).

    Args:
        source: ``dialogue`` (the values said) or ``task_goal_oracle`` (the task goal).
        schema: The SGD schema naming each service's slots (``dialogue`` only); without it the
            slots looked for are the task goal's slot names.
    """

    name = "local"

    def __init__(
        self,
        source: BankSource = "dialogue",
        schema: Mapping[str, ServiceSchema] | None = None,
    ) -> None:
        self.source = source
        self.schema = schema

    def build(self, individual_id: str, session: MsTodSession) -> JudgeResult[list[MemoryUnit]]:
        """The session's local units."""
        if self.source == "task_goal_oracle":
            return JudgeResult(value=local_memory_units(individual_id, session), judge=self.name)
        values = dialogue_slot_values(session, self.schema)
        return JudgeResult(value=slot_units(individual_id, session, values), judge=self.name)


class LLMMemoryBankBuilder(PromptJudge[SessionMemory]):
    """App. B.4: an intent description and QA pairs per session, one call each.

    A pair whose ``Slot`` names a task-goal slot (first time) gets the id
    ``individual/session/slot`` and that slot's value; other pairs get ``.../qa<n>``.
    """

    def build(self, individual_id: str, session: MsTodSession) -> JudgeResult[list[MemoryUnit]]:
        """Ask the model; ``value=None`` with the judge's reason when it gives no usable JSON."""
        return self._units(individual_id, session, self.ask(**_fields(session)))

    async def abuild(
        self, individual_id: str, session: MsTodSession
    ) -> JudgeResult[list[MemoryUnit]]:
        """Async twin of :meth:`build`."""
        result = await self.aask(**_fields(session))
        return self._units(individual_id, session, result)

    def _units(
        self, individual_id: str, session: MsTodSession, result: JudgeResult[SessionMemory]
    ) -> JudgeResult[list[MemoryUnit]]:
        memory = result.value
        if memory is None:
            return JudgeResult(value=None, judge=self.name, reason=result.reason)
        units: list[MemoryUnit] = []
        for number, pair in enumerate(memory.qa_summary, start=1):
            slot = pair.slot if pair.slot in session.task_goal else None
            if slot is not None and any(unit.slot == slot for unit in units):
                slot = None  # a second question about the same slot keeps its own id
            units.append(
                MemoryUnit(
                    unit_id=memory_unit_id(
                        individual_id, session.session_id, slot or f"qa{number}"
                    ),
                    individual_id=individual_id,
                    session_id=session.session_id,
                    intent=session.intent,
                    intent_description=memory.intent_description.strip(),
                    question=pair.question.strip(),
                    answer=pair.answer.strip(),
                    slot=slot,
                    value=session.task_goal[slot] if slot is not None else None,
                )
            )
        return JudgeResult(value=units, judge=self.name)


def _fields(session: MsTodSession) -> dict[str, str]:
    return {
        "intent": intent_in_words(session.intent),
        "conversation_history": render_context(session.content),
        "task_goal": render_slot_values(session.task_goal),
    }


def individual_units(
    builder: MemoryBankBuilder, individual: Individual
) -> tuple[list[MemoryUnit], dict[str, str]]:
    """``(units, failures)``: every stored session of an individual as units.

    ``failures`` map each session that could not be built to the builder's reason.
    """
    units: list[MemoryUnit] = []
    failures: dict[str, str] = {}
    for session in individual.sessions:
        result = builder.build(individual.individual_id, session)
        if result.value is None:
            failures[session.session_id] = result.reason or "no units"
        else:
            units.extend(result.value)
    return units, failures
