"""Memory-guided dialogue planning: the intent's task attributes (MAP, paper 001, §4.2).

What the planning stage (the ``intent_capture`` and ``missing_slot_query`` roles) reads from an
SGD ``schema.json`` and from memory: :func:`task_attributes` and the schema's defaults
(:func:`attribute_defaults`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from todeval.evals.datasets.sgd_schema import IntentSchema, ServiceSchema
from todeval.evals.memory_schema import MsTodSession


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
