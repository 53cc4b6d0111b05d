"""The local intent capture: the given intent in words plus the values the context states."""

from __future__ import annotations

from collections.abc import Iterable

from todeval.evals.datasets.sgd_schema import ServiceSchema, stated_values
from todeval.evals.memory_schema import MsTodSession
from todeval.evals.metrics.memory.scores import slot_value_mentioned
from todeval.evals.metrics.memory.slot_mention import normalise
from todeval.nodes.memory.judges.intent_capture import CapturedIntent, CaptureRequest
from todeval.nodes.memory.judges.intent_capture.features import (
    ValueKind,
    context_values,
    settle_dates,
    value_kind,
)
from todeval.nodes.memory.judges.units import intent_description

#: A number counts as stated for a slot only this close (in words) to a word of the slot's name.
NUMBER_WINDOW = 3

_GENERIC_SLOT_WORDS = frozenset({"number", "of", "num", "count", "total"})


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


def slot_kinds(
    slots: Iterable[str],
    known_values: Iterable[tuple[str, str]] = (),
    service: ServiceSchema | None = None,
) -> dict[str, ValueKind]:
    """What each slot holds, from the schema's possible values, memory's values and its name."""
    values: dict[str, list[str]] = {}
    for slot, value in known_values:
        values.setdefault(slot, []).append(value)
    if service is not None:
        for spec in service.slots:
            if spec.is_categorical:
                values.setdefault(spec.name, []).extend(spec.possible_values)
    return {slot: value_kind(slot, values.get(slot, ())) for slot in dict.fromkeys(slots)}


class LocalIntentCapture:
    """``local``: the given intent in words plus the stated values, worded like ``k_j``.

    A value counts as stated three ways, the later winning: read off the context by the kind
    of value the slot holds (flags, counts, times, dates in natural wording:
    :func:`~nodes.memory.judges.intent_capture.features.context_values`), a categorical value
    of the schema named word for word, or a value memory holds for the intent that the context
    mentions (memory's wording then stands: "1:15 pm" for "quarter past 1 in the afternoon").
    """

    name = "local"

    def capture(self, request: CaptureRequest) -> CapturedIntent:
        """The stated values and ``"The user wants to {intent} for {name} in {place}"``."""
        intent, schema, service = request.intent, request.schema, request.service
        if not intent:
            return CapturedIntent(
                intent="",
                intent_description=None,
                judge=self.name,
                reason="the local judge needs the session's intent (MS-TOD gives it)",
            )
        text = "\n".join(t.utterance for t in request.context)
        known = list(request.known_values)
        spec = schema.get(service) if schema is not None and service else None
        kinds = slot_kinds([*request.attributes, *(slot for slot, _ in known)], known, spec)
        stated = settle_dates(context_values(text, kinds), kinds, known)
        if spec is not None:
            stated |= stated_values(spec, intent, text)
        stated |= stated_slot_values(text, known)
        return CapturedIntent(
            intent=intent,
            intent_description=intent_description(intent, stated),
            stated_values=stated,
            judge=self.name,
        )
