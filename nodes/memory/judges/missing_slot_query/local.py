"""The local missing-slot query: attributes the context leaves open, asked in the third person."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from todeval.evals.memory_words import intent_in_words, slot_in_words
from todeval.nodes.memory.judges.missing_slot_query.role import MissingSlotQuery, Turns


def missing_question(intent: str, slot: str) -> str:
    """The third-person question asking for one missing attribute (Figure 8's rules)."""
    return f"What {slot_in_words(slot)} does the user want for the {intent_in_words(intent)}?"


class LocalMissingSlotQuery:
    """``local``: the task attributes without a stated value, each asked as a question."""

    def __init__(self) -> None:
        self.name = "local"

    def query(
        self,
        context: Turns,
        intent: str,
        attributes: Sequence[str],
        *,
        stated: Mapping[str, str] | None = None,
    ) -> MissingSlotQuery:
        """Attributes not in ``stated`` are missing; no attributes -> not judged (None)."""
        if not attributes:
            return MissingSlotQuery(
                intent=intent,
                task_attributes=[],
                missing_slots=None,
                query=None,
                judge=self.name,
                reason=f"no task attributes known for intent {intent!r} (no schema, no sessions)",
            )
        missing = [slot for slot in attributes if slot not in (stated or {})]
        questions = [missing_question(intent, slot) for slot in missing]
        return MissingSlotQuery(
            intent=intent,
            task_attributes=list(attributes),
            missing_slots=missing,
            questions=questions,
            query=" ".join(questions),
            judge=self.name,
        )
