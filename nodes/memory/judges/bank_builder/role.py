"""What the bank builder returns: a session's intent description and QA memory (MAP App. B.4)."""

from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from todeval.evals.memory_schema import MemoryUnit, MsTodSession
from todeval.nodes.judges.result import JudgeResult

ROLE = "memory_bank"


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


class MemoryBankBuilder(Protocol):
    """Turns a stored session into QA memory units (the ``memory_bank`` role)."""

    name: str

    def build(self, individual_id: str, session: MsTodSession) -> JudgeResult[list[MemoryUnit]]:
        """The session's units, or ``value=None`` with a reason when they cannot be built."""
        ...
