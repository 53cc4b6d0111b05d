"""What the missing-slot query returns: open task attributes, as questions (MAP §4.2, Fig. 8)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from pydantic import BaseModel, Field

from todeval.evals.memory_schema import MsTodTurn

MISSING_ROLE = "missing_slot_query"

Turns = Sequence[MsTodTurn]


class MissingSlotQuery(BaseModel):
    """The hypothesised missing-slot query ``q_miss`` (§4.2, Figure 8)."""

    intent: str = Field(description="The intent whose task attributes were checked.")
    task_attributes: list[str] = Field(description="The intent's task attributes (slots).")
    missing_slots: list[str] | None = Field(
        description="Attributes the context leaves unanswered; None if not judged."
    )
    questions: list[str] = Field(
        default_factory=list, description="One third-person question per missing attribute."
    )
    query: str | None = Field(
        description="q_miss: the questions joined ('' when nothing is missing); None if not judged."
    )
    judge: str = Field(description="The judge spec that produced it.")
    reason: str | None = Field(default=None, description="Why the query is None.")


class MissingSlotQuerier(Protocol):
    """Anything that asks which task attributes the context leaves unanswered."""

    name: str

    def query(
        self,
        context: Turns,
        intent: str,
        attributes: Sequence[str],
        *,
        stated: Mapping[str, str] | None = None,
    ) -> MissingSlotQuery:
        """``q_miss`` for ``intent``'s ``attributes`` (``stated``: values already given)."""
        ...
