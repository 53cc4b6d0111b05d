"""The LLM bank builder: the memory construction prompt (paper 001, App. A.2, Fig. 13)."""

from __future__ import annotations

from todeval.evals.memory_schema import MemoryUnit, MsTodSession
from todeval.evals.memory_words import (
    intent_in_words,
)
from todeval.nodes.judges.llm_role import LLMRole
from todeval.nodes.judges.provider_options import bounded_schema
from todeval.nodes.judges.result import JudgeResult
from todeval.nodes.memory.judges.bank_builder.role import ROLE, SessionMemory
from todeval.nodes.memory.judges.units import memory_unit_id, render_context
from todeval.nodes.prompts.memory import MEMORY_BANK_PROMPT, MEMORY_BANK_SYSTEM_PROMPT


class LLMMemoryBankBuilder(LLMRole[SessionMemory]):
    """App. B.4 through :class:`LLMJudge`: an intent description and QA pairs per session.

    A pair whose ``Slot`` names a task-goal slot (first time) gets the id
    ``individual/session/slot`` and that slot's value; other pairs get ``.../qa<n>``.
    Built like every :class:`~nodes.judges.llm_role.LLMRole` (``spec``, ``chat_model=``,
    ``cache=``, ``max_retries=``).
    """

    role = ROLE
    prompt = MEMORY_BANK_PROMPT
    system = MEMORY_BANK_SYSTEM_PROMPT
    output_model = SessionMemory
    # A session has a handful of facts: bounded, a small model cannot loop on one QA pair.
    decoding_schema = bounded_schema(SessionMemory, max_chars=120, max_items=8)

    def build(self, individual_id: str, session: MsTodSession) -> JudgeResult[list[MemoryUnit]]:
        """Ask the model; ``value=None`` with the judge's reason when it gives no usable JSON."""
        return self._units(individual_id, session, self.llm.invoke(_variables(session)))

    async def abuild(
        self, individual_id: str, session: MsTodSession
    ) -> JudgeResult[list[MemoryUnit]]:
        """Async twin of :meth:`build`."""
        result = await self.llm.ainvoke(_variables(session))
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


def _variables(session: MsTodSession) -> dict[str, str]:
    return {
        "intent": intent_in_words(session.intent),
        "conversation_history": render_context(session.content),
        "task_goal": "\n".join(f"{s}: {v}" for s, v in session.task_goal.items()) or "none",
    }
