"""What the local intent capture reads off a context: times and dates in natural wording.

:func:`times` and :func:`dates` give the intent's time and date slots the values the context
states ("quarter past 1 in the afternoon" -> ``1:15 pm``; "the 2nd of March" -> ``March 2nd``;
"tomorrow"); with several slots of a kind, the slot whose words stand just before the value
("pick it up at 10 am", "check out on ..."), the others in slot order. :func:`settle_dates`
lets a date that names no calendar day give way to the one memory holds.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from todeval.evals.metrics.memory.slot_mention import (
    date_in_words,
    date_spans,
    normalise,
    ordinal,
    time_spans,
)

_WEEKDAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_RELATIVE_DATE = re.compile(
    rf"\b(day after tomorrow|today|tonight|tomorrow|(?:next|this|coming) (?:{_WEEKDAYS})"
    rf"|(?:on )(?:{_WEEKDAYS})(?: next week| this week)?|the \d{{1,2}}(?:st|nd|rd|th))\b"
)
_DAY_ONLY = re.compile(r"^the (\d{1,2})(?:st|nd|rd|th)$")
#: Words users say for a date or time slot's own words (``pickup_date`` <- "pick it up").
_CUE_SYNONYMS = {
    "pickup": ("pick up", "pick it up", "pickup", "collect"),
    "dropoff": ("drop off", "drop it off", "dropoff", "return"),
    "departure": ("depart", "leave", "leaving", "departure", "outbound", "going"),
    "leaving": ("leave", "leaving", "depart"),
    "return": ("return", "back", "coming back", "inbound"),
    "inbound": ("return", "back", "coming back", "inbound"),
    "outbound": ("depart", "leave", "leaving", "outbound", "going"),
    "start": ("start", "starting", "from", "pick up", "pick it up"),
    "end": ("end", "ending", "until", "till", "drop off", "drop it off", "return"),
    "check in": ("check in", "checking in", "arrive", "arriving"),
    "check out": ("check out", "checking out", "until", "till"),
}
_HOURS = {
    word: str(hour)
    for hour, word in enumerate(
        "one two three four five six seven eight nine ten eleven twelve".split(), start=1
    )
}
_SPOKEN_HOUR = re.compile(
    rf"\b({'|'.join(_HOURS)})"
    r"(?=\s*(?:a\.?m\b|p\.?m\b|o'?clock|in the (?:morning|afternoon|evening|night)))",
    re.IGNORECASE,
)
_CUE_WINDOW = 32  # characters before a date or time searched for its slot's cue


def spoken_hours(text: str) -> str:
    """Hours said in words before a period as digits: "eleven am" -> "11 am"."""
    return _SPOKEN_HOUR.sub(lambda m: _HOURS[m[1].lower()], text)


def time_and_date_spans(text: str) -> list[tuple[int, int]]:
    """The character spans of every time and date in ``text``."""
    spans = [(start, end) for start, end, _ in time_spans(text)]
    spans += [(start, end) for start, end, _ in date_spans(text)]
    spans += [m.span() for m in _RELATIVE_DATE.finditer(text.lower())]
    return spans


def _cued(before: str, slot: str) -> bool:
    words = [w for w in slot.lower().split("_") if w not in ("date", "time")]
    phrase = " ".join(words)
    first = words[0] if words else ""
    cues = (phrase, *_CUE_SYNONYMS.get(phrase, ()), *_CUE_SYNONYMS.get(first, ()))
    lowered = " ".join(normalise(before).split())
    return any(cue and re.search(rf"\b{re.escape(cue)}\b", lowered) for cue in cues)


def _assign(text: str, spans: Sequence[tuple[int, str]], slots: Sequence[str]) -> dict[str, str]:
    """Values at character offsets -> slots: by cue words before each, then in slot order."""
    if not spans or not slots:
        return {}
    if len(slots) == 1:
        return {slots[0]: spans[-1][1]}
    found: dict[str, str] = {}
    loose: list[str] = []
    for start, value in spans:
        before = text[max(0, start - _CUE_WINDOW) : start]
        slot = next((s for s in slots if _cued(before, s)), None)
        if slot is None:
            loose.append(value)
        else:
            found[slot] = value
    free = [s for s in slots if s not in found]
    found.update(zip(free, loose, strict=False))
    return found


def times(text: str, slots: Sequence[str]) -> dict[str, str]:
    """The clock times ``text`` states for the time ``slots``."""
    spans = [(start, _clock(time)) for start, _, time in time_spans(text)]
    return _assign(text, spans, slots)


def _clock(time: tuple[int, int, str | None]) -> str:
    hour, minute, ampm = time
    shown = hour or 12
    clock = f"{shown}:{minute:02d}" if minute or ampm is None else f"{shown}"
    return f"{clock} {ampm}" if ampm else clock


def dates(text: str, slots: Sequence[str]) -> dict[str, str]:
    """The dates ``text`` states for the date ``slots`` (calendar days or relative words)."""
    lowered = text.lower()
    spans = [(start, date_in_words(month, day)) for start, _, (month, day) in date_spans(text)]
    taken = [range(start, end) for start, end, _ in date_spans(text)]
    for match in _RELATIVE_DATE.finditer(lowered):
        if not any(match.start() in span for span in taken):
            said = match[1].removeprefix("on ").replace("tonight", "today")
            said = re.sub(r"^the (\d+)\w*$", lambda m: "the " + ordinal(int(m[1])), said)
            spans.append((match.start(), said))
    return _assign(text, sorted(spans), slots)


def settle_dates(
    found: Mapping[str, str], kinds: Mapping[str, str], known: Iterable[tuple[str, str]]
) -> dict[str, str]:
    """Context dates that name no calendar day give way to the calendar dates memory holds.

    "Thursday next week" or "tomorrow" names a day only given today's date, which the reader
    does not know: when memory holds a calendar date for the slot, that date stands (it is how
    the user's earlier "Thursday" was resolved) and the relative one is dropped. "The 12th"
    becomes memory's date for the slot that falls on the 12th, else it is dropped.
    """
    calendar: dict[str, list[str]] = {}
    for slot, value in known:
        if kinds.get(slot) == "date" and date_spans(value):
            calendar.setdefault(slot, []).append(value)
    settled: dict[str, str] = {}
    for slot, value in found.items():
        if kinds.get(slot) != "date" or date_spans(value):
            settled[slot] = value
            continue
        day = _DAY_ONLY.match(value)
        if day is not None:
            same = [v for v in calendar.get(slot, []) if date_spans(v)[0][2][1] == int(day[1])]
            if same:
                settled[slot] = same[0]
        elif slot not in calendar:
            settled[slot] = value
    return settled
