"""What the reader returns: MAP's confirmation response r = LLM_Reader(c, A_core) (§4.3)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from pydantic import BaseModel, Field

from todeval.evals.memory_schema import MemoryUnit, MsTodTurn

ROLE = "reader"

Memory = Sequence[str] | Sequence[MemoryUnit]


class ReaderResult(BaseModel):
    """A confirmation response and, for the local reader, the slot values it states."""

    response: str | None = Field(description="The confirmation response; None if not written.")
    slots: dict[str, str] | None = Field(
        description="Slot -> value the response states (local reader); None when unknown."
    )
    judge: str = Field(description="The judge spec that wrote it.")
    reason: str | None = Field(default=None, description="Why the response is None.")


class MemoryReader(Protocol):
    """Writes the confirmation response from the context and the refined memory."""

    name: str

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
        """The confirmation response.

        Args:
            context: The new session's utterances so far.
            intent: The session's intent (given, as in MS-TOD).
            refined_memory: ``A_core`` (core answers) or the selected units, best first.
            task_goal_hint: Slot values the context states (intent capture), never gold.
            defaults: Schema defaults of optional slots, confirmed only when neither the
                context nor memory gives the slot (:func:`~nodes.memory.judges.planning.
                attribute_defaults`).
            text_memory: ``refined_memory`` holds whole dialogues or summaries (a comparison
                setting), not QA memory.
        """
        ...
