"""QA memory units of a stored session (MAP / MS-TOD, paper 001, §3.2, App. B.4, Fig. 13).

A session becomes an intent description ``k_i`` and QA pairs ``v_i = {(q_ij, a_ij)}``, one per
task attribute. The paper builds them with GPT-4 (App. A.2 / B.4); the local builder here writes
them from the session's task goal, one unit per slot, so banks are deterministic and offline:

- question ``"What {slot in words} did the user want for the {intent in words}?"``,
- answer ``"The {slot in words} was {value}."``,
- intent description ``"The user wants to {intent in words}"`` followed by the session's salient
  values (names, then one place: ``" for Gen Korean BBQ House in Milpitas"``).

The LLM builder (:class:`LLMMemoryBankBuilder`, prompt in :mod:`nodes.prompts.memory`)
reads the session's dialogue (:func:`render_context`, the rendering every MAP prompt shares) and
task goal; :func:`memory_bank_builder` picks one from a judge spec (``local`` by default).

The naming helpers (:func:`intent_in_words`, :func:`slot_in_words`, :func:`slot_kind`...) are
the project's shared convention for SGD identifiers in words; they live in
:mod:`evals.memory_words` (the data layer needs them too) and are re-exported here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel, ConfigDict, Field

from evals.memory_schema import Individual, MemoryUnit, MsTodSession, MsTodTurn
from evals.memory_words import (
    SlotKind,
    intent_in_words,
    is_number_or_boolean,
    salient_values,
    slot_in_words,
    slot_kind,
)
from nodes.judges.llm_role import LLMRole
from nodes.judges.result import JudgeResult
from nodes.judges.spec import JudgeSpecError, parse_spec
from nodes.prompts.memory import MEMORY_BANK_PROMPT, MEMORY_BANK_SYSTEM_PROMPT

__all__ = [
    "LLMMemoryBankBuilder",
    "LocalMemoryBankBuilder",
    "MemoryBankBuilder",
    "QAPair",
    "SessionMemory",
    "SlotKind",
    "intent_description",
    "individual_units",
    "intent_in_words",
    "is_number_or_boolean",
    "local_memory_units",
    "memory_bank_builder",
    "memory_unit_id",
    "render_context",
    "salient_values",
    "slot_answer",
    "slot_in_words",
    "slot_kind",
    "slot_question",
]


#: How the paper's prompts name the two sides of the dialogue.
SPEAKER_NAMES = {"user": "user", "system": "assistant"}


def render_context(context: Sequence[MsTodTurn]) -> str:
    """Turns as the prompts show them: one ``"user: ..."``/``"assistant: ..."`` per line."""
    return "\n".join(f"{SPEAKER_NAMES[t.speaker]}: {t.utterance}" for t in context)


def intent_description(intent: str, task_goal: Mapping[str, str]) -> str:
    """The local intent description ``k_i`` of a session.

    Example: ``"The user wants to reserve restaurant for Gen Korean BBQ House in Milpitas"``.
    """
    text = f"The user wants to {intent_in_words(intent)}"
    for slot, value in salient_values(task_goal):
        text += f" {'in' if slot_kind(slot) == 'place' else 'for'} {value}"
    return text


def slot_question(intent: str, slot: str) -> str:
    """The local question ``q_ij`` about one task attribute."""
    return f"What {slot_in_words(slot)} did the user want for the {intent_in_words(intent)}?"


def slot_answer(slot: str, value: str) -> str:
    """The local answer ``a_ij`` stating one slot value."""
    return f"The {slot_in_words(slot)} was {value}."


def memory_unit_id(individual_id: str, session_id: str, slot: str) -> str:
    """The id of a slot's unit: ``individual/session/slot`` (see :class:`MemoryUnit`)."""
    return f"{individual_id}/{session_id}/{slot}"


def local_memory_units(individual_id: str, session: MsTodSession) -> list[MemoryUnit]:
    """The local QA memory units of a stored session: one per task-goal slot.

    Args:
        individual_id: Whose memory the session is.
        session: The stored session; only its intent and task goal are read.

    Returns:
        One unit per slot of ``session.task_goal``, in the goal's order; empty for an empty goal.
    """
    description = intent_description(session.intent, session.task_goal)
    return [
        MemoryUnit(
            unit_id=memory_unit_id(individual_id, session.session_id, slot),
            individual_id=individual_id,
            session_id=session.session_id,
            intent=session.intent,
            intent_description=description,
            question=slot_question(session.intent, slot),
            answer=slot_answer(slot, value),
            slot=slot,
            value=value,
        )
        for slot, value in session.task_goal.items()
    ]


# -- bank builders: the memory_bank role ------------------------------------------------------

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


class LocalMemoryBankBuilder:
    """The local builder: :func:`local_memory_units` (one unit per task-goal slot)."""

    name = "local"

    def build(self, individual_id: str, session: MsTodSession) -> JudgeResult[list[MemoryUnit]]:
        """The session's local units (see the module docstring)."""
        return JudgeResult(value=local_memory_units(individual_id, session), judge=self.name)


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


def memory_bank_builder(
    spec: str = "local", *, chat_model: BaseChatModel | None = None
) -> MemoryBankBuilder:
    """The bank builder for ``spec``: ``local`` (or ``local:slots``) or an LLM spec.

    Args:
        spec: A judge spec.
        chat_model: For an LLM spec, a ready chat model instead of building one (tests).

    Raises:
        JudgeSpecError: The spec is malformed or names an unknown local variant.
        JudgeConfigError: The LLM cannot be built here (package or key missing).
    """
    parsed = parse_spec(spec)
    if not parsed.is_local:
        return LLMMemoryBankBuilder(parsed, chat_model=chat_model)
    if parsed.variant not in (None, "default", "slots"):
        raise JudgeSpecError(f"{ROLE}: no local variant {parsed.variant!r}; use 'local'")
    return LocalMemoryBankBuilder()


def individual_units(
    builder: MemoryBankBuilder, individual: Individual
) -> tuple[list[MemoryUnit], dict[str, str]]:
    """Every stored session of an individual as units.

    Returns:
        ``(units, failures)``: the units of the sessions that could be built, and for each
        session that could not, its id -> the builder's reason.
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
