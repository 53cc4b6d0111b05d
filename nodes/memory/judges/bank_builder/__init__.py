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

from langchain_core.language_models import BaseChatModel

from todeval.evals.memory_schema import Individual, MemoryUnit
from todeval.nodes.judges.spec import JudgeSpecError, parse_spec
from todeval.nodes.memory.judges.bank_builder.llm import LLMMemoryBankBuilder
from todeval.nodes.memory.judges.bank_builder.local import LocalMemoryBankBuilder
from todeval.nodes.memory.judges.bank_builder.role import ROLE, MemoryBankBuilder


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


__all__ = ["individual_units", "memory_bank_builder"]
