"""The LLM judges of the slot repair loop (paper 001, §4.3): ``<provider>:<model>`` specs.

:class:`LLMRepairAgent` answers :data:`~nodes.prompts.memory.REPAIR_AGENT_PROMPT`;
:class:`LLMSupervisor` answers :data:`~nodes.prompts.memory.MISSING_SLOTS_PROMPT` (L) and
:data:`~nodes.prompts.memory.SUPERVISOR_PROMPT` (resolved slots per exchange). A failed
call gives ``value=None`` (or an empty utterance) with the reason; slot names a model invents
are dropped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field, field_validator

from todeval.evals.memory_schema import MsTodTurn
from todeval.evals.memory_words import slot_in_words
from todeval.nodes.judges.llm import LLMJudge
from todeval.nodes.judges.llm_role import LLMRole
from todeval.nodes.judges.provider_options import bounded_schema
from todeval.nodes.judges.result import JudgeResult
from todeval.nodes.judges.spec import JudgeSpec
from todeval.nodes.memory.judges.slot_repair.role import (
    AGENT_ROLE,
    SUPERVISOR_ROLE,
    AgentTurn,
    RepairRequest,
)
from todeval.nodes.prompts.memory import (
    MISSING_SLOTS_PROMPT,
    MISSING_SLOTS_SYSTEM_PROMPT,
    REPAIR_AGENT_PROMPT,
    REPAIR_AGENT_SYSTEM_PROMPT,
    SUPERVISOR_PROMPT,
)
from todeval.nodes.simulation.users.words import (
    render_goal,
    render_history,
    slots_asked_about,
)

__all__ = ["LLMAgentTurn", "LLMRepairAgent", "LLMResolved", "LLMSlotList", "LLMSupervisor"]


class LLMAgentTurn(BaseModel):
    """The LLM agent's answer."""

    utterance: str = Field(min_length=1, description="The agent's next message to the user.")
    asked_slots: list[str] = Field(
        default_factory=list, description="Slots the message asks about or confirms."
    )


class LLMRepairAgent(LLMRole[LLMAgentTurn]):
    """An LLM is the agent under test (:data:`REPAIR_AGENT_PROMPT`)."""

    role = AGENT_ROLE
    prompt = REPAIR_AGENT_PROMPT
    system = REPAIR_AGENT_SYSTEM_PROMPT
    output_model = LLMAgentTurn
    # One short turn: bounded, a small model cannot write prose inside the utterance forever.
    decoding_schema = bounded_schema(LLMAgentTurn, max_chars=400, max_items=16)

    def speak(self, request: RepairRequest) -> AgentTurn:
        """One call per turn; slots it names outside L are read from the text instead."""
        result = self.llm.invoke(
            {
                "conversation_history": render_history(request.context),
                "response": request.response,
                "pending_slots": _slot_lines(request.pending_slots),
                "repair_history": render_history(request.exchange)
                if request.exchange
                else "(none yet)",
            }
        )
        if result.value is None:
            return AgentTurn("", [], self.name, reason=result.reason)
        said = result.value
        pending = list(request.pending_slots)
        asked = [s for s in dict.fromkeys(said.asked_slots) if s in pending]
        # A model that lists no (or only unknown) slots: read them from its words.
        asked = asked or slots_asked_about(said.utterance, pending)
        return AgentTurn(said.utterance.strip(), asked, self.name)


class LLMSlotList(BaseModel):
    """The missing-slots answer."""

    missing_or_wrong_slots: list[str] = Field(
        description="Task-goal slots the response leaves out or states incorrectly."
    )
    rationale: str = Field(default="", description="One sentence saying why.")

    @field_validator("missing_or_wrong_slots", mode="before")
    @classmethod
    def _none_is_empty(cls, value: object) -> object:
        return [] if value is None else value


class LLMResolved(BaseModel):
    """The supervisor's per-exchange answer."""

    resolved_slots: list[str] = Field(description="Unresolved slots this exchange resolved.")
    rationale: str = Field(default="", description="One sentence saying why.")

    @field_validator("resolved_slots", mode="before")
    @classmethod
    def _none_is_empty(cls, value: object) -> object:
        return [] if value is None else value


class LLMSupervisor:
    """An LLM supervises the loop (:data:`MISSING_SLOTS_PROMPT`, :data:`SUPERVISOR_PROMPT`)."""

    def __init__(self, spec: JudgeSpec, *, max_retries: int = 3, **llm_kwargs: Any) -> None:
        self.name = spec.raw
        common: dict[str, Any] = {"spec": spec, "max_retries": max_retries, **llm_kwargs}
        self.find = LLMJudge(
            role=SUPERVISOR_ROLE,
            prompt=MISSING_SLOTS_PROMPT,
            system=MISSING_SLOTS_SYSTEM_PROMPT,
            output_model=LLMSlotList,
            **common,
        )
        self.check = LLMJudge(
            role=SUPERVISOR_ROLE,
            prompt=SUPERVISOR_PROMPT,
            system=MISSING_SLOTS_SYSTEM_PROMPT,
            output_model=LLMResolved,
            **common,
        )

    def missing_or_wrong(
        self, response: str, task_goal: Mapping[str, str], context: Sequence[MsTodTurn]
    ) -> JudgeResult[list[str]]:
        """Ask the model; keep the slots it names that are in the goal, in goal order."""
        result = self.find.invoke(
            {
                "conversation_history": render_history(context),
                "task_goal": render_goal(task_goal),
                "response": response,
            }
        )
        if result.value is None:
            return JudgeResult(None, self.name, result.reason)
        named = set(result.value.missing_or_wrong_slots)
        return JudgeResult([s for s in task_goal if s in named], self.name)

    def resolved(
        self,
        task_goal: Mapping[str, str],
        pending: Sequence[str],
        agent_utterance: str,
        user_utterance: str,
    ) -> JudgeResult[list[str]]:
        """Ask the model; keep the pending slots it names."""
        result = self.check.invoke(
            {
                "task_goal": render_goal(task_goal),
                "pending_slots": _slot_lines(pending),
                "agent_utterance": agent_utterance,
                "user_utterance": user_utterance,
            }
        )
        if result.value is None:
            return JudgeResult(None, self.name, result.reason)
        named = set(result.value.resolved_slots)
        return JudgeResult([s for s in pending if s in named], self.name)


def _slot_lines(slots: Sequence[str]) -> str:
    return "\n".join(f"- {s} ({slot_in_words(s)})" for s in slots) or "(none)"
