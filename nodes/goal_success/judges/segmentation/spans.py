"""Generic value spans in a message: times, days, counts, money, names and reference codes.

Goals in human conversations share slot values (the same day and party for the hotel as for
the restaurant, a taxi between the two), so "does the message carry a value already in play"
says little on its own; what matters is *which* values and *where* they were seen: the entity
the assistant just offered, the current goal, or nowhere yet. Spans are found by shape, not by
any dataset's slot names, so they read the same in SGD, MultiWOZ-style or help-desk dialogues.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

_TIME = re.compile(
    r"\b(\d{1,2}[:.]\d{2}\s*(am|pm|a\.m\.|p\.m\.)?|\d{1,2}\s*(am|pm|a\.m\.|p\.m\.|o'?clock)|"
    r"noon|midnight|(half|quarter) (past|to) \w+|(morning|afternoon|evening|night|tonight))\b",
    re.IGNORECASE,
)
_DAY = re.compile(
    r"\b(mon|tues|wednes|thurs|fri|satur|sun)day\b|\b(today|tomorrow|tonight|weekend|"
    r"next week|this week)\b|\b(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.? "
    r"\d{1,2}(st|nd|rd|th)?\b|\b\d{1,2}(st|nd|rd|th)( of)? (jan|feb|mar|apr|may|jun|jul|aug|"
    r"sep|oct|nov|dec)[a-z]*\b|\b\d{4}-\d{2}-\d{2}\b",
    re.IGNORECASE,
)
_COUNT = re.compile(
    r"\b(\d+|one|two|three|four|five|six|seven|eight|nine|ten)\s+(people|persons?|guests?|"
    r"adults?|children|kids|tickets?|seats?|nights?|rooms?|days?|weeks?|of us|passengers?)\b|"
    r"\bfor (\d+|two|three|four|five|six|seven|eight)\b",
    re.IGNORECASE,
)
_MONEY = re.compile(
    r"[$£€]\s?\d[\d,.]*|\b\d[\d,.]*\s?(pounds|dollars|euros|usd|gbp|eur)\b", re.IGNORECASE
)
#: Booking references, order/ticket ids and phone numbers: a token mixing digits and capitals,
#: or a long digit run.
_CODE = re.compile(
    r"\b(?=[A-Z0-9-]*\d)(?=[A-Z0-9-]*[A-Z])[A-Z0-9][A-Z0-9-]{4,}\b|\b\d[\d -]{6,}\d\b"
)
#: Runs of capitalised words, joined into names ("Mezze Yard", "Museum of Clocks").
_NAME = re.compile(r"\b[A-Z][a-zA-Z'&-]+\b(?:\s+(?:[A-Z][a-zA-Z'&-]+\b|of\b|the\b))*")
_NOT_NAMES = frozenset(
    "I I'm I'd I'll I've OK Ok Hi Hello Hey Thanks Thank Yes No Please Sure Great Perfect "
    "Mr Mrs Ms Dr Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February "
    "March April May June July August September October November December".split()
)

#: The span types, in feature order.
SPAN_TYPES = ("time", "day", "count", "money", "code", "name")


@dataclass(frozen=True)
class Spans:
    """The normalised values of each type found in a text."""

    by_type: dict[str, frozenset[str]]

    @property
    def values(self) -> frozenset[str]:
        """Every value, whatever its type."""
        return frozenset().union(*self.by_type.values())

    def names(self) -> frozenset[str]:
        """Names (proper nouns) only."""
        return self.by_type["name"]


def _normalise(value: str) -> str:
    return " ".join(value.lower().split())


def find_spans(text: str) -> Spans:
    """The value spans of ``text`` by type (see :data:`SPAN_TYPES`)."""
    found: dict[str, set[str]] = {kind: set() for kind in SPAN_TYPES}
    found["time"] = {_normalise(m.group(0)).replace(".", ":") for m in _TIME.finditer(text)}
    for kind, pattern in (
        ("day", _DAY),
        ("count", _COUNT),
        ("money", _MONEY),
        ("code", _CODE),
    ):
        found[kind] = {_normalise(m.group(0)) for m in pattern.finditer(text)}
    for sentence in re.split(r"(?<=[.!?])\s+", text.strip()):
        for match in _NAME.finditer(sentence):
            words = match.group(0).split()
            if match.start() == 0 and len(words) == 1:
                continue  # a capital that only opens the sentence
            words = [w for w in words if w not in _NOT_NAMES]
            while words and words[-1] in {"of", "the"}:
                words.pop()
            if words and words[0][0].isupper():
                found["name"].add(_normalise(" ".join(words)))
    return Spans({kind: frozenset(values) for kind, values in found.items()})


def merge(spans: Iterable[Spans]) -> Spans:
    """The union of several texts' spans, type by type."""
    merged: dict[str, set[str]] = {kind: set() for kind in SPAN_TYPES}
    for item in spans:
        for kind, values in item.by_type.items():
            merged[kind] |= values
    return Spans({kind: frozenset(values) for kind, values in merged.items()})


def mentions(values: frozenset[str], text_spans: Spans, text: str) -> bool:
    """Whether any of ``values`` (names from elsewhere) is mentioned in ``text``.

    A name counts when it is among ``text_spans`` or any of its words of four or more letters
    appears in the lower-cased text ("the lido" mentions "Westfield Lido").
    """
    if values & text_spans.values:
        return True
    lowered = text.lower()
    return any(
        re.search(rf"\b{re.escape(word)}\b", lowered)
        for value in values
        for word in value.split()
        if len(word) >= 4 and word not in _GENERIC_NAME_WORDS
    )


#: Words common in venue names that do not identify one venue by themselves.
_GENERIC_NAME_WORDS = frozenset(
    "the and house hotel restaurant cafe station street road lane park centre center city "
    "town house guesthouse lodge inn bar grill kitchen garden museum college church hall "
    "theatre cinema pool club bank".split()
)
