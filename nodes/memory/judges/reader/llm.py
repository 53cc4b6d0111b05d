"""The LLM reader: the Figure 9 prompt through LLMRole.

Its task-goal block holds only what the dialogue identifies, never the gold values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, Field

from todeval.evals.memory_schema import MemoryUnit, MsTodTurn
from todeval.evals.memory_words import intent_in_words, slot_in_words
from todeval.nodes.judges.llm_role import LLMRole
from todeval.nodes.memory.judges.reader.role import ROLE, Memory, ReaderResult
from todeval.nodes.memory.judges.units import render_context
from todeval.nodes.prompts.memory import READER_PROMPT, READER_SYSTEM_PROMPT


def render_memory(refined_memory: Memory) -> str:
    """Memory as the reader prompt shows it: a core answer (or a Q/A pair) per line."""
    lines = [
        f"Q: {item.question} A: {item.answer}" if isinstance(item, MemoryUnit) else item
        for item in refined_memory
    ]
    return "\n".join(line for line in lines if line.strip()) or "unavailable"


def render_task_goal(
    intent: str, hint: Mapping[str, str] | None, defaults: Mapping[str, str] | None = None
) -> str:
    """The ``[TASK GOAL]`` block: the intent, stated values, defaults; never gold values."""
    lines = [f"intent: {intent_in_words(intent) if intent else 'unknown'}"]
    lines += [f"{slot_in_words(slot)}: {value}" for slot, value in (hint or {}).items()]
    lines += [
        f"{slot_in_words(slot)}: {value} (default, unless the memory or the user says otherwise)"
        for slot, value in (defaults or {}).items()
        if slot not in (hint or {})
    ]
    return "\n".join(lines)


class LLMReaderOutput(BaseModel):
    """The reader prompt's JSON."""

    response: str = Field(min_length=1, description="The confirmation response to the user.")


class LLMReader(LLMRole[LLMReaderOutput]):
    """Figure 9 through :class:`LLMJudge`."""

    role = ROLE
    prompt = READER_PROMPT
    system = READER_SYSTEM_PROMPT
    output_model = LLMReaderOutput

    def respond(
        self,
        context: Sequence[MsTodTurn],
        intent: str,
        refined_memory: Memory,
        task_goal_hint: Mapping[str, str] | None = None,
        *,
        defaults: Mapping[str, str] | None = None,
        text_memory: bool = False,
    ) -> ReaderResult:
        """One call; which slots the free-text response states is read later (JGA's state)."""
        result = self.llm.invoke(
            {
                "conversation_history": render_context(context),
                "task_goal": render_task_goal(intent, task_goal_hint, defaults),
                "memory": render_memory(refined_memory),
            }
        )
        return ReaderResult(
            response=result.value.response.strip() if result.value else None,
            slots=None,
            judge=self.name,
            reason=result.reason if result.value is None else None,
        )
