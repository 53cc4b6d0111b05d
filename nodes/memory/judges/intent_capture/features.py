"""What the local intent capture reads off a context: values stated in natural wording.

The new session states some values afresh ("a table for one", "at quarter past 1 in the
afternoon"). :func:`context_values` reads them by the kind of value a slot holds
(:func:`value_kind`): ``flag`` (a key word or synonym affirmed or negated, the last mention
winning), ``count`` (a number with the slot's unit, or a party size), ``time``, ``date``
(absolute or relative, assigned by the slot words just before it, else in slot order) and
``amount``. A time, date, party size or sum for an intent with no such slot is kept under a
generic name (:data:`GENERIC_SLOTS`), as a confirmation would still echo it.

Names and places are not read here: without a list of values a word cannot be told from a
name.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Literal

from todeval.evals.metrics.memory.slot_mention import flag_polarities, month_name, normalise
from todeval.nodes.memory.judges.intent_capture.when import (
    dates,
    settle_dates,
    spoken_hours,
    time_and_date_spans,
    times,
)

__all__ = ["GENERIC_SLOTS", "ValueKind", "context_values", "settle_dates", "value_kind"]

ValueKind = Literal["flag", "count", "time", "date", "amount", "other"]
Reader = Callable[[str, Sequence[str]], dict[str, str]]
"""Reads the values of one kind: ``(text, slots of that kind) -> slot -> value``."""

_FLAG_VALUES = frozenset({"true", "false"})
_AMOUNT_WORDS = frozenset({"amount", "price", "fare", "cost", "balance"})
_MONEY = re.compile(
    r"\$\s?(?P<a>\d[\d,]*(?:\.\d+)?)|\b(?P<b>\d[\d,]*(?:\.\d+)?)\s*(?:dollars?|bucks|usd)\b",
    re.IGNORECASE,
)
_COUNT_WORDS = frozenset(
    {"number", "num", "count", "travelers", "passengers", "riders", "adults", "seats"}
    | {"tickets", "rooms", "size", "guests", "people", "persons", "length", "members"}
)
_PERSON_WORDS = frozenset(
    {"seats", "tickets", "travelers", "passengers", "riders", "adults", "size", "guests"}
    | {"people", "persons", "party", "group", "members", "riders"}
)
_PERSON_NOUNS = (
    "people", "person", "persons", "guest", "adult", "traveler", "traveller", "passenger",
    "rider", "seat", "ticket", "of us", "us",
)  # fmt: skip
#: Unit nouns of counts that are not people.
_THING_NOUNS = {"room": ("room",), "day": ("day", "night"), "length": ("day", "night")}
_NOT_A_COUNT_AFTER = frozenset({"am", "pm", "o", "oclock", "clock", "th", "st", "nd", "rd"})
_NOT_A_COUNT_BEFORE = frozenset({"at", "around", "by", "after", "before", "until", "till"})
_MONTHS = frozenset(month_name(number).lower() for number in range(1, 13))
#: Words before a number that ends its sentence and counts the intent's one thing ("I need 4.").
_ASKED_COUNT = re.compile(r"(?:need|want|get|book|buy|reserve|make it|for|just|only)$")


def value_kind(slot: str, values: Iterable[str] = ()) -> ValueKind:
    """What a slot holds, from the values known for it (memory, schema) and its name."""
    known = [v.strip().lower() for v in values if v.strip()]
    if known and all(v in _FLAG_VALUES for v in known):
        return "flag"
    if known and all(v.isdigit() for v in known):
        return "count"
    words = slot.lower().split("_")
    if _AMOUNT_WORDS & set(words):
        return "amount"
    if "time" in words:
        return "time"
    if "date" in words:
        return "date"
    if _COUNT_WORDS & set(words) and "name" not in words:
        return "count"
    return "other"


#: Slot names for a time, a date or a party size the context states when the intent is known
#: to have no slot of that kind (no schema, and memory never held one).
GENERIC_SLOTS: dict[ValueKind, str] = {
    "time": "time",
    "date": "date",
    "count": "number_of_people",
    "amount": "amount",
}


def context_values(
    text: str, kinds: Mapping[str, ValueKind], *, generic: bool = True
) -> dict[str, str]:
    """The values ``text`` states for the slots in ``kinds`` (see the module docstring).

    Args:
        text: The new session's context as one text.
        kinds: Slot -> what it holds (:func:`value_kind`), in the intent's slot order.
        generic: When no slot of ``kinds`` holds times (dates, party sizes), read the one the
            context states under :data:`GENERIC_SLOTS`' name: a confirmation can say "at
            1:15 pm" without knowing the slot is ``appointment_time``.

    Returns:
        Slot -> value in a canonical wording ("True", "3", "1:15 pm", "March 2nd", "tomorrow").
    """
    text = spoken_hours(text)  # "eleven am" -> "11 am"
    found: dict[str, str] = {}
    for slot, kind in kinds.items():
        if kind == "flag" and (said := flag_polarities(text, slot)):
            found[slot] = "True" if said[-1] else "False"
    readers: dict[ValueKind, Reader] = {
        "count": _counts,
        "time": times,
        "date": dates,
        "amount": _amounts,
    }
    for wanted, read in readers.items():
        slots = [s for s, k in kinds.items() if k == wanted]
        if not slots and generic:
            slots = [GENERIC_SLOTS[wanted]]
        found |= read(text, slots)
    return found


def _amounts(text: str, slots: Sequence[str]) -> dict[str, str]:
    """A sum of money ("$30", "1,130 bucks") for the one amount slot."""
    said = [f"${m['a'] or m['b']}" for m in _MONEY.finditer(text)]
    return {slots[0]: said[-1]} if said and len(slots) == 1 else {}


def _person_slots(slots: Sequence[str]) -> list[str]:
    return [s for s in slots if _PERSON_WORDS & set(s.lower().split("_"))]


def _nouns(slot: str) -> tuple[str, ...]:
    words = slot.lower().split("_")
    own = tuple(w.rstrip("s") for w in words if w in _COUNT_WORDS - {"number", "num", "count"})
    things = tuple(n for w in words for n in _THING_NOUNS.get(w.rstrip("s"), ()))
    return own + things


def _counts(text: str, slots: Sequence[str]) -> dict[str, str]:
    if not slots:
        return {}
    people = _person_slots(slots)
    found: dict[str, str] = {}
    for start, end in sorted(time_and_date_spans(text), reverse=True):
        text = text[:start] + " " * (end - start) + text[end:]  # "at 8 in the night" is no count
    for sentence in re.split(r"(?<=[.!?])\s+", text):
        words = normalise(sentence).split()
        if len(words) == 1 and words[0].isdigit() and len(slots) == 1:
            found[slots[0]] = words[0]
            continue
        for at, word in enumerate(words):
            if not word.isdigit() or len(word) > 2 or not _could_be_count(words, at):
                continue
            last = at == len(words) - 1
            if last and len(slots) == 1 and _ASKED_COUNT.search(" ".join(words[:at])):
                found[slots[0]] = word  # "Yes, I need 4."
                continue
            slot = _count_slot(words, at, slots, people)
            if slot is not None:
                found[slot] = word
    return found


def _could_be_count(words: Sequence[str], at: int) -> bool:
    after = words[at + 1] if at + 1 < len(words) else ""
    before = words[at - 1] if at > 0 else ""
    return (
        after not in _NOT_A_COUNT_AFTER
        and not after.isdigit()
        and before not in _NOT_A_COUNT_BEFORE
        and before not in _MONTHS
        and after not in _MONTHS
    )


def _count_slot(
    words: Sequence[str], at: int, slots: Sequence[str], people: Sequence[str]
) -> str | None:
    following = " ".join(words[at + 1 : at + 3])
    for slot in slots:
        if any(re.match(rf"(?:\w+ )?{noun}s?\b", following) for noun in _nouns(slot)):
            return slot
    person_said = any(re.match(rf"(?:\w+ )?{noun}s?\b", following) for noun in _PERSON_NOUNS)
    before = " ".join(words[max(0, at - 2) : at])
    party = re.search(r"(?:\bfor|party of|group of|table for|the)$", before)
    if (person_said or party) and len(people) == 1:
        return people[0]
    return None
