"""The dialogue state a confirmation commits to (MAP's JGA, :mod:`evals.metrics.memory.state`).

The local reader reports the state it filled its template from. A free-text confirmation (an
LLM reader's) is read here: per task attribute, the candidate values the system had that the
response states (:func:`~nodes.memory.judges.intent_capture.local.stated_slot_values`, so a
bare number counts only beside the slot's words); a value contained in a longer stated value
of the same slot is the same mention ("Sipan" in "Sipan Peruvian Restaurant & Bar"); a slot
with two different stated values is ambiguous and predicts nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from todeval.evals.metrics.memory.slot_mention import normalise
from todeval.nodes.memory.judges.intent_capture.local import stated_slot_values


def read_dialogue_state(
    response: str, candidates: Iterable[tuple[str, str]]
) -> tuple[dict[str, str], list[str]]:
    """``(slot -> value, ambiguous slots)`` that ``response`` states among ``candidates``."""
    by_slot: dict[str, list[str]] = {}
    for slot, value in candidates:
        if value not in by_slot.setdefault(slot, []):
            by_slot[slot].append(value)
    state: dict[str, str] = {}
    ambiguous: list[str] = []
    for slot, values in by_slot.items():
        stated = [v for v in values if stated_slot_values(response, [(slot, v)])]
        kept = {
            normalise(v): v
            for v in stated
            if not any(w != v and normalise(v) in normalise(w) for w in stated)
        }
        if len(kept) == 1:
            state[slot] = next(iter(kept.values()))
        elif len(kept) > 1:
            ambiguous.append(slot)
    return state, ambiguous


def predicted_state(
    reader_slots: Mapping[str, str] | None,
    response: str | None,
    candidates: Iterable[tuple[str, str]],
    attributes: Sequence[str],
) -> tuple[dict[str, str] | None, str, list[str]]:
    """``(state or None, "reader" | "response" | "none", ambiguous slots)`` of the item.

    Slots outside ``attributes`` (a time kept under a generic name) are not state slots; empty
    ``attributes`` keeps every slot.
    """
    if response is None:
        return None, "none", []
    if reader_slots is not None:
        state, source, ambiguous = dict(reader_slots), "reader", list[str]()
    else:
        state, ambiguous = read_dialogue_state(response, candidates)
        source = "response"
    if attributes:
        state = {slot: value for slot, value in state.items() if slot in attributes}
    return state, source, ambiguous
