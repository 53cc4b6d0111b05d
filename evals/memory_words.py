"""SGD identifiers in words, and which slot values identify a session (MAP / MS-TOD, paper 001).

``ReserveRestaurant`` -> "reserve restaurant", ``restaurant_name`` -> "restaurant name". In
``evals`` so the data layer can use it; :mod:`nodes.memory.judges.bank_builder` re-exports it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Literal

SlotKind = Literal["name", "place", "other"]

# SGD slots naming a place (city, area, address, station...). Checked after the name slots,
# so ``destination_airport_name`` is a name.
_PLACE_WORDS = (
    "city",
    "location",
    "area",
    "address",
    "destination",
    "origin",
    "station",
    "where_to",
)
# Non-``*_name`` SGD slots whose values are proper names (titles, people).
_NAME_SLOTS = frozenset(
    {"title", "artist", "album", "director", "actors", "starring", "song_name", "event_name"}
)
_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_NUMBER = re.compile(r"^[$€£]?\s*-?\d+(?:[.,]\d+)*\s*(?:%|dollars?|usd)?$", re.IGNORECASE)
_NOT_A_VALUE = frozenset({"true", "false", "none", "dontcare", "don't care", "yes", "no"})


def intent_in_words(intent: str) -> str:
    """An SGD intent in words: ``ReserveRestaurant`` -> ``"reserve restaurant"``."""
    spaced = _CAMEL_BOUNDARY.sub(" ", intent.replace("_", " "))
    return " ".join(spaced.split()).lower()


def slot_in_words(slot: str) -> str:
    """An SGD slot in words: ``restaurant_name`` -> ``"restaurant name"`` (as intents are)."""
    return intent_in_words(slot)


def slot_kind(slot: str) -> SlotKind:
    """Whether a slot holds a name, a place or something else (date, time, count, flag...)."""
    name = slot.lower()
    if name.endswith("name") or name in _NAME_SLOTS:
        return "name"
    if any(word in name for word in _PLACE_WORDS):
        return "place"
    return "other"


def is_number_or_boolean(value: str) -> bool:
    """Whether a slot value is a number, an amount or a flag rather than words."""
    text = value.strip()
    return not text or text.lower() in _NOT_A_VALUE or bool(_NUMBER.match(text))


def salient_values(task_goal: Mapping[str, str]) -> list[tuple[str, str]]:
    """``(slot, value)`` pairs that identify a session: every name, then the first place.

    Numbers and flags never count (a name slot can hold ``"2"`` in noisy data).
    """
    usable = [(s, v) for s, v in task_goal.items() if not is_number_or_boolean(v)]
    names = [(s, v) for s, v in usable if slot_kind(s) == "name"]
    places = [(s, v) for s, v in usable if slot_kind(s) == "place"]
    return names + places[:1]
