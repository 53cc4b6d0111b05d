"""Memory-guided dialogue planning judges: intent capture and the missing-slot query (paper 001).

MAP §4.2 first turns the new session's context ``c_i`` into a high-level intent description
``k_i`` (the retrieval query), then uses chain-of-thought prompting to hypothesise the missing
slot query ``q_miss`` (what the memory must supply). Two roles:

* ``intent_capture`` - ``local``: the given intent in words plus the values the context states,
  worded like a stored session's description (:func:`~nodes.judges.memory_units.
  intent_description`), so ``k_i`` and the bank's ``k_j`` compare like with like. A value counts
  as stated when it is one the user's earlier sessions of the intent hold (or a categorical
  value of the schema) and the context mentions it. LLM: :data:`INTENT_CAPTURE_PROMPT`.
* ``missing_slot_query`` - ``local``: the intent's task attributes (required and optional slots
  of an SGD ``schema.json`` when given, else the slots its stored sessions use) that the context
  does not fill, each asked as a third-person question (Figure 8's rules). LLM: Figure 8 with
  chain of thought (:data:`MISSING_SLOT_QUERY_PROMPT`).

Every result records the judge spec; a judge that cannot answer returns ``None`` with a reason.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Generic, Literal, Protocol, TypeVar

from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel, Field

from evals.datasets.sgd_schema import IntentSchema, ServiceSchema, load_sgd_schema
from evals.memory_schema import MsTodSession, MsTodTurn
from evals.metrics.memory import slot_value_mentioned
from evals.metrics.slot_mention import normalise
from nodes.judges.goal_extraction import stated_values
from nodes.judges.llm import LLMJudge
from nodes.judges.memory_units import intent_description, intent_in_words, slot_in_words
from nodes.judges.spec import JudgeSpec, JudgeSpecError, parse_spec
from nodes.prompts.memory_active import INTENT_CAPTURE_PROMPT, MISSING_SLOT_QUERY_PROMPT
from stores.llm_cache import LLMCache

__all__ = [
    "CapturedIntent",
    "IntentCapturer",
    "LLMIntentCapture",
    "LLMMissingSlotQuery",
    "LLMRole",
    "LocalIntentCapture",
    "LocalMissingSlotQuery",
    "attribute_defaults",
    "MissingSlotQuerier",
    "MissingSlotQuery",
    "intent_capturer",
    "missing_question",
    "missing_slot_querier",
    "render_context",
    "schema_intent",
    "session_values",
    "stated_slot_values",
    "task_attributes",
]

INTENT_ROLE = "intent_capture"
MISSING_ROLE = "missing_slot_query"
#: How the paper's prompts name the two sides of the dialogue.
SPEAKER_NAMES = {"user": "user", "system": "assistant"}
Turns = Sequence[MsTodTurn]
OutT = TypeVar("OutT", bound=BaseModel)
#: A number counts as stated for a slot only this close (in words) to a word of the slot's name.
NUMBER_WINDOW = 3
_GENERIC_SLOT_WORDS = frozenset({"number", "of", "num", "count", "total"})


class CapturedIntent(BaseModel):
    """The intent description ``k_i`` of the current session (§4.2, intent capture)."""

    intent: str = Field(description="The intent given to the system (SGD name), '' if none.")
    intent_description: str | None = Field(
        description="k_i: one sentence summarising the user's objective; None if not judged."
    )
    stated_values: dict[str, str] = Field(
        default_factory=dict,
        description="Slot -> value the context states (local judge only; {} from an LLM).",
    )
    judge: str = Field(description="The judge spec that produced it.")
    reason: str | None = Field(default=None, description="Why the description is None.")


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


class IntentCapturer(Protocol):
    """Anything that writes the intent description ``k_i`` of a session's context."""

    name: str

    def capture(
        self,
        context: Turns,
        intent: str,
        *,
        known_values: Iterable[tuple[str, str]] = (),
        service: str | None = None,
    ) -> CapturedIntent:
        """The context's intent description (``known_values``: candidate slot values)."""
        ...


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


def render_context(context: Turns) -> str:
    """The context as the prompts show it: one ``"user: ..."``/``"assistant: ..."`` per line."""
    return "\n".join(f"{SPEAKER_NAMES[t.speaker]}: {t.utterance}" for t in context)


def session_values(sessions: Iterable[MsTodSession], intent: str) -> list[tuple[str, str]]:
    """The ``(slot, value)`` pairs the stored sessions of ``intent`` hold, in order."""
    return [
        (slot, value)
        for session in sessions
        if session.intent == intent
        for slot, value in session.task_goal.items()
    ]


def stated_slot_values(text: str, candidates: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The candidate values ``text`` mentions, one per slot.

    Of several mentioned values of a slot the longest wins (it is the more specific one:
    "Sipan Peruvian Restaurant & Bar" over "Sipan").
    A bare number ("2", "one") is too common to trust on its own: it counts only when a word
    of its slot's name stands within :data:`NUMBER_WINDOW` words of it ("one day" fills
    ``number_of_days``, not ``number_of_rooms``).
    """
    found: dict[str, str] = {}
    for slot, value in candidates:
        if len(value) <= len(found.get(slot, "")):
            continue
        if normalise(value).isdigit() and not _number_near_slot(value, text, slot):
            continue
        if slot_value_mentioned(value, text, slot=slot):
            found[slot] = value
    return found


def _number_near_slot(value: str, text: str, slot: str) -> bool:
    words = normalise(text).split()
    wanted = normalise(value)
    stems = [w.rstrip("s")[:4] for w in slot.lower().split("_") if w not in _GENERIC_SLOT_WORDS]
    for at, word in enumerate(words):
        if word != wanted:
            continue
        window = words[max(0, at - NUMBER_WINDOW) : at + NUMBER_WINDOW + 1]
        if any(w.startswith(stem) for stem in stems for w in window):
            return True
    return False


def schema_intent(
    intent: str,
    schema: Mapping[str, ServiceSchema],
    *,
    service: str | None = None,
    sessions: Iterable[MsTodSession] = (),
    known_slots: Iterable[str] = (),
) -> IntentSchema | None:
    """The schema's ``intent`` in ``service``, else in the service whose slots memory uses most.

    Two hotel services' ``ReserveHotel`` name their slots differently; the one whose required
    and optional slots best cover the slots of the intent's stored sessions and ``known_slots``
    (e.g. the bank's units) is chosen (the schema's order breaks ties).
    """
    offering = {
        name: spec for name, svc in schema.items() if (spec := svc.intent(intent)) is not None
    }
    if service in offering:
        return offering[service]
    used = _used_slots(intent, sessions, known_slots)
    ranked = sorted(
        offering.values(),
        key=lambda spec: -sum(used[s] for s in [*spec.required_slots, *spec.optional_slots]),
    )
    return ranked[0] if ranked else None


def _used_slots(
    intent: str, sessions: Iterable[MsTodSession], known_slots: Iterable[str]
) -> Counter[str]:
    used = Counter(slot for s in sessions if s.intent == intent for slot in s.task_goal)
    used.update(known_slots)
    return used


def task_attributes(
    intent: str,
    *,
    schema: Mapping[str, ServiceSchema] | None = None,
    service: str | None = None,
    sessions: Iterable[MsTodSession] = (),
    known_slots: Iterable[str] = (),
) -> list[str]:
    """The slots a task goal of ``intent`` has (Figure 8's ``task_attributes``).

    With a schema: the required then optional slots of the intent (:func:`schema_intent` picks
    the service); SGD confirmations state the optional slots too (``number_of_seats``,
    ``date``), so both count. Without a schema (or if it lacks the intent): every slot the
    intent's stored sessions and ``known_slots`` set, most used first.
    """
    sessions = list(sessions)
    known_slots = list(known_slots)
    if schema is not None:
        spec = schema_intent(
            intent, schema, service=service, sessions=sessions, known_slots=known_slots
        )
        if spec is not None:
            return list(dict.fromkeys([*spec.required_slots, *spec.optional_slots]))
    return [slot for slot, _ in _used_slots(intent, sessions, known_slots).most_common()]


def attribute_defaults(
    intent: str,
    schema: Mapping[str, ServiceSchema],
    *,
    service: str | None = None,
    sessions: Iterable[MsTodSession] = (),
    known_slots: Iterable[str] = (),
) -> dict[str, str]:
    """The schema's default values of the intent's optional slots (``"dontcare"`` left out).

    A system confirms them when nobody said otherwise (SGD's CONFIRM acts state
    ``number_of_seats: 2`` unasked); the reader may take them as its last resort.
    """
    spec = schema_intent(
        intent, schema, service=service, sessions=sessions, known_slots=known_slots
    )
    if spec is None:
        return {}
    return {s: v for s, v in spec.optional_slots.items() if v and v.lower() != "dontcare"}


def missing_question(intent: str, slot: str) -> str:
    """The third-person question asking for one missing attribute (Figure 8's rules)."""
    return f"What {slot_in_words(slot)} does the user want for the {intent_in_words(intent)}?"


class LocalIntentCapture:
    """``local``: the given intent in words plus the stated values, worded like ``k_j``.

    Args:
        schema: An SGD schema; its categorical values of the intent count as candidates too.
    """

    def __init__(self, schema: Mapping[str, ServiceSchema] | None = None) -> None:
        self.name = "local"
        self.schema = dict(schema) if schema is not None else None

    def capture(
        self,
        context: Turns,
        intent: str,
        *,
        known_values: Iterable[tuple[str, str]] = (),
        service: str | None = None,
    ) -> CapturedIntent:
        """The stated values and ``"The user wants to {intent} for {name} in {place}"``."""
        if not intent:
            return CapturedIntent(
                intent="",
                intent_description=None,
                judge=self.name,
                reason="the local judge needs the session's intent (MS-TOD gives it)",
            )
        text = "\n".join(t.utterance for t in context)
        stated = stated_slot_values(text, known_values)
        if self.schema is not None and service in self.schema:
            stated = stated_values(self.schema[service], intent, text) | stated
        return CapturedIntent(
            intent=intent,
            intent_description=intent_description(intent, stated),
            stated_values=stated,
            judge=self.name,
        )


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


class LLMRole(Generic[OutT]):
    """A judge role answered by one prompt through :class:`LLMJudge`.

    Subclasses set ``role``, ``prompt``, ``output_model`` and optionally ``system``.

    Args:
        spec: An LLM spec.
        chat_model: A ready chat model (tests); else built from the spec.
        cache: The LLM response cache (see :class:`LLMJudge`).
        max_retries: Retries after a failed or malformed answer.
    """

    role: str
    prompt: str
    output_model: type[OutT]
    system: str | None = None

    def __init__(
        self,
        spec: JudgeSpec | str,
        *,
        chat_model: BaseChatModel | None = None,
        cache: LLMCache | None | Literal["default"] = "default",
        max_retries: int = 3,
    ) -> None:
        self.llm: LLMJudge[OutT] = LLMJudge(
            role=self.role,
            spec=spec,
            prompt=self.prompt,
            system=self.system,
            output_model=self.output_model,
            chat_model=chat_model,
            cache=cache,
            max_retries=max_retries,
        )
        self.name = self.llm.spec.raw


class LLMIntentOutput(BaseModel):
    """The intent capture prompt's JSON."""

    intent_description: str = Field(min_length=1, description="k_i, one sentence.")


class LLMMissingSlotOutput(BaseModel):
    """The task slot query prompt's JSON (Figure 8, with the missing attributes named)."""

    missing_slots: list[str] = Field(default_factory=list, description="Unanswered attributes.")
    questions: list[str] = Field(description="One third-person question per missing attribute.")


class LLMIntentCapture(LLMRole[LLMIntentOutput]):
    """The intent capture prompt through :class:`LLMJudge`."""

    role = INTENT_ROLE
    prompt = INTENT_CAPTURE_PROMPT
    output_model = LLMIntentOutput

    def capture(
        self,
        context: Turns,
        intent: str,
        *,
        known_values: Iterable[tuple[str, str]] = (),
        service: str | None = None,
    ) -> CapturedIntent:
        """One call; the model reads the values from the dialogue itself."""
        result = self.llm.invoke(
            {
                "intent": intent_in_words(intent) if intent else "unknown",
                "conversation_history": render_context(context),
            }
        )
        value = result.value
        return CapturedIntent(
            intent=intent,
            intent_description=value.intent_description.strip() if value else None,
            judge=self.name,
            reason=result.reason if value is None else None,
        )


class LLMMissingSlotQuery(LLMRole[LLMMissingSlotOutput]):
    """Figure 8 with chain of thought through :class:`LLMJudge`."""

    role = MISSING_ROLE
    prompt = MISSING_SLOT_QUERY_PROMPT
    output_model = LLMMissingSlotOutput

    def query(
        self,
        context: Turns,
        intent: str,
        attributes: Sequence[str],
        *,
        stated: Mapping[str, str] | None = None,
    ) -> MissingSlotQuery:
        """One call; named attributes are mapped back to slot names where they match."""
        by_words = {slot_in_words(slot): slot for slot in attributes}
        result = self.llm.invoke(
            {
                "conversation_history": render_context(context),
                "intent": intent_in_words(intent) if intent else "unknown",
                "task_attributes": ", ".join(by_words) or "unknown",
            }
        )
        if result.value is None:
            return MissingSlotQuery(
                intent=intent,
                task_attributes=list(attributes),
                missing_slots=None,
                query=None,
                judge=self.name,
                reason=result.reason,
            )
        missing = [
            by_words.get(slot_in_words(named), named.strip())
            for named in result.value.missing_slots
            if named.strip()
        ]
        questions = [q.strip() for q in result.value.questions if q.strip()]
        return MissingSlotQuery(
            intent=intent,
            task_attributes=list(attributes),
            missing_slots=list(dict.fromkeys(missing)),
            questions=questions,
            query=" ".join(questions),
            judge=self.name,
        )


@functools.lru_cache(maxsize=8)
def intent_capturer(spec: str = "local", schema_path: str | None = None) -> IntentCapturer:
    """The intent capture judge for ``spec``, built once per (spec, schema).

    Args:
        spec: ``"local"`` or an LLM spec.
        schema_path: An SGD ``schema.json`` whose categorical values the local judge also
            looks for.

    Raises:
        JudgeSpecError: The spec is malformed or an unknown local variant.
    """
    parsed = parse_spec(spec)
    if not parsed.is_local:
        return LLMIntentCapture(parsed)
    if parsed.variant not in (None, "default"):
        raise JudgeSpecError(f"{INTENT_ROLE}: no local variant {parsed.variant!r}")
    return LocalIntentCapture(load_sgd_schema(schema_path) if schema_path else None)


@functools.lru_cache(maxsize=8)
def missing_slot_querier(spec: str = "local") -> MissingSlotQuerier:
    """The missing-slot query judge for ``spec`` (built once per spec).

    Raises:
        JudgeSpecError: The spec is malformed or an unknown local variant.
    """
    parsed = parse_spec(spec)
    if not parsed.is_local:
        return LLMMissingSlotQuery(parsed)
    if parsed.variant not in (None, "default"):
        raise JudgeSpecError(f"{MISSING_ROLE}: no local variant {parsed.variant!r}")
    return LocalMissingSlotQuery()
