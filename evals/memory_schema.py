"""Data contracts for multi-session memory (MAP / MS-TOD, paper 001).

An individual is one user with a memory bank of earlier sessions (Figure 12) and evaluation
items (a new session's opening context whose confirmation must recall stored values); the
benchmark file is a :class:`MemoryBench`. Sessions are stored as QA memory units (Figure 13).
Ids (:data:`Id`) may be JSON numbers (Figure 12's ``"session_id": 9``) and are kept as text.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

Speaker = Literal["user", "system"]


def _speaker(value: Any) -> Any:
    """MS-TOD's own files say ``assistant`` (Fig. 12); SGD says ``system``: one name."""
    if isinstance(value, str) and value.strip().lower() in ("assistant", "system", "agent"):
        return "system"
    return value.strip().lower() if isinstance(value, str) else value


def _slot_values(value: Any) -> Any:
    """Task goals hold text; MS-TOD's files also have numbers (``"number_of_rooms": 1``).

    A slot without a value (``null`` or blank text) is not part of the goal: nobody can state
    it, so it could only ever count as missed.
    """
    if isinstance(value, dict):
        return {
            key: str(item).lower() if isinstance(item, bool) else str(item)
            for key, item in value.items()
            if item is not None and str(item).strip()
        }
    return value


TaskGoal = Annotated[dict[str, str], BeforeValidator(_slot_values)]


def _id_text(value: Any) -> Any:
    """An id given as a JSON number (Figure 12's ``"session_id": 9``) is the text ``"9"``.

    Booleans and non-integral numbers are left to fail validation: they are not ids.
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return value.strip() if isinstance(value, str) else value


Id = Annotated[str, BeforeValidator(_id_text)]
"""An id read as int or str (Figure 12 numbers sessions) and kept as text."""


class MsTodTurn(BaseModel):
    """One utterance of a session's ``content`` or an eval item's ``context``.

    Unknown fields (MS-TOD's ``is_confirmation``) are kept.
    """

    model_config = ConfigDict(extra="allow")

    speaker: Annotated[Speaker, BeforeValidator(_speaker)] = Field(
        description="Who spoke: ``user`` or ``system`` (``assistant`` is read as ``system``)."
    )
    utterance: str = Field(min_length=1, description="What was said.")


class MsTodSession(BaseModel):
    """One stored earlier session of an individual (Figure 12)."""

    model_config = ConfigDict(extra="allow")

    session_id: Id = Field(
        min_length=1, description="Unique within the individual (int or str; kept as text)."
    )
    domain: str = Field(description="Service or domain, e.g. ``Restaurants_1``.")
    intent: str = Field(min_length=1, description="Intent pursued, e.g. ``ReserveRestaurant``.")
    content: list[MsTodTurn] = Field(min_length=1, description="The session's utterances.")
    task_goal: TaskGoal = Field(description="Slot -> value the user had set by its end.")


class MsTodEvalItem(BaseModel):
    """A new session's opening that calls for a confirmation response."""

    model_config = ConfigDict(extra="allow")

    eval_id: Id = Field(
        min_length=1, description="Unique within the benchmark (int or str; kept as text)."
    )
    intent: str = Field(min_length=1, description="The item's intent, given to the system.")
    context: list[MsTodTurn] = Field(min_length=1, description="Utterances so far; last is user.")
    task_goal: TaskGoal = Field(description="Gold slot values of the confirmation.")
    reference_response: str = Field(description="The dataset's confirmation utterance.")
    relevant_session_ids: list[Id] = Field(
        description="Stored sessions that hold the values this item needs (int or str ids)."
    )


class Individual(BaseModel):
    """One user: their stored sessions (the memory bank's source) and evaluation items."""

    model_config = ConfigDict(extra="allow")

    individual_id: Id = Field(
        min_length=1, description="Unique within the benchmark (int or str; kept as text)."
    )
    sessions: list[MsTodSession] = Field(description="Earlier sessions, oldest first.")
    eval: list[MsTodEvalItem] = Field(description="Evaluation items of this individual.")


class MemoryBench(BaseModel):
    """The benchmark file: ``{"individuals": [...]}``."""

    model_config = ConfigDict(extra="allow")

    individuals: list[Individual] = Field(description="The benchmark's users.")


class MemoryUnit(BaseModel):
    """One QA memory unit (Figure 13) of a stored session.

    ``unit_id`` is ``f"{individual_id}/{session_id}/{slot}"`` for a slot's QA pair, so a
    retrieved unit names the session it came from (Recall@k counts relevant sessions' units).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    unit_id: str = Field(description="``individual/session/slot``: unique in a memory bank.")
    individual_id: Id = Field(description="Whose memory this is.")
    session_id: Id = Field(description="The session the unit was built from.")
    intent: str = Field(description="The session's intent, e.g. ``ReserveRestaurant``.")
    intent_description: str = Field(description="The session's intent in words (k_i).")
    question: str = Field(description="A question about one task attribute (q_ij).")
    answer: str = Field(description="Its answer, stating the slot value (a_ij).")
    slot: str | None = Field(default=None, description="The task slot answered, when known.")
    value: str | None = Field(default=None, description="The slot's value, when known.")


class ScoredUnit(BaseModel):
    """A memory unit with its scores through activation, judging and re-ranking (§4.2)."""

    model_config = ConfigDict(extra="forbid")

    unit: MemoryUnit = Field(description="The memory unit.")
    retrieval_score: float = Field(description="s_prev: retrieval score scaled to [0, 1].")
    judger_score: float | None = Field(
        default=None, description="s_judger = P(y=1 | c, q_miss, q, a); None without a judger."
    )
    final_score: float = Field(
        description="alpha * s_prev + (1 - alpha) * s_judger, or s_prev without a judger."
    )


class MemoryEvalRecord(BaseModel):
    """One evaluation item and whose memory it needs (a run's record, named by ``eval_id``)."""

    model_config = ConfigDict(frozen=True)

    eval_id: Id
    individual_id: Id
    item: MsTodEvalItem


def eval_records(bench: MemoryBench) -> Iterator[MemoryEvalRecord]:
    """Every evaluation item of the benchmark with its individual."""
    for individual in bench.individuals:
        for item in individual.eval:
            yield MemoryEvalRecord(
                eval_id=item.eval_id, individual_id=individual.individual_id, item=item
            )
