"""Whether a response mentions a slot value: slot accuracy and JGA of a text (paper 001).

MAP's figures are read off a generated confirmation, so local and LLM readers are compared on
the same text. A value is mentioned when, lower-cased, punctuation as spaces and number words
as digits, its words are a contiguous run of the response's; money drops ``$``, commas and
``dollars``. Beyond that:

- times: ``12:15`` ~ ``12:15 pm`` ~ ``quarter past 12``; am/pm must agree when both say it;
- dates: ``March 2nd`` ~ ``2nd of March`` ~ ``march 2``;
- flags, given the slot: ``True`` when a key word of the slot appears without a negation near
  it ("a shared ride"), ``False`` / ``None`` when with one ("not shared", "subtitles: none").
  Key words are the slot name's first and last non-filler words (:func:`flag_stems`) and
  their listed synonyms, compared on their first five letters.
"""

from __future__ import annotations

import re

_NUMBER_WORDS = {
    word: str(number)
    for number, word in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
}
_MONTH_NAMES = (
    "january february march april may june july august september october november december"
)
_MONTHS = {name: number for number, name in enumerate(_MONTH_NAMES.split(), start=1)}
_MONTH = "|".join(_MONTHS)
_NUM = r"\d{1,2}|" + "|".join(_NUMBER_WORDS)
_DATE = re.compile(
    rf"\b(?:(?P<m1>{_MONTH})\s+(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?\b"
    rf"|(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\s+of\s+(?P<m2>{_MONTH})\b)"
)
_TIME = re.compile(
    rf"\b(?:(?P<rel>quarter past|half past|quarter to)\s+(?P<rh>{_NUM})"
    r"|(?P<h>\d{1,2})(?::(?P<m>\d{2}))?\s*(?P<ap>a\.?m\.?|p\.?m\.?|o['\"’]?\s?clock)?)(?![\d:])"
)
_AFTER_PERIOD = re.compile(r"^\s*(?:in the )?(?P<p>morning|afternoon|evening|night)\b")
_BEFORE_PERIOD = re.compile(r"\b(?P<p>morning|afternoon|evening|night)\s*(?:at\s+)?$")
# Words of a negation once punctuation is flattened ("don't" -> "don t"); "false" negates the
# flag the simulated user states as "the shared ride should be False".
_NEGATIONS = frozenset(
    {"no", "not", "non", "without", "none", "never", "nope", "false", "don", "doesn", "didn"}
    | {"isn", "won", "wouldn", "dont", "doesnt", "isnt", "wont", "neither", "nor"}
)
_FLAG_FILLER = frozenset(
    {"has", "is", "allowed", "good", "for", "of", "number", "free", "add", "offers", "serves"}
    | {"welcome", "available", "needed", "required"}
)
# Head words too common to name a flag on their own ("I need a ride" is no shared ride).
_GENERIC_HEADS = frozenset(
    {"ride", "trip", "service", "services", "options", "language", "type", "day", "room"}
)
#: Synonyms of flag slots' key words that users say instead ("trip insurance").
FLAG_SYNONYMS: dict[str, tuple[str, ...]] = {
    "protection": ("insurance", "insured"),
    "insurance": ("protection", "insured"),
    "wifi": ("internet", "wireless"),
    "shared": ("share", "sharing", "pool"),
    "refundable": ("refund",),
    "luggage": ("luggage", "baggage", "bags", "suitcase"),
    "additional": ("extra",),
    "kids": ("children", "child", "family"),
    "pets": ("dog",),
}
#: Words looked at before and after a flag's key word for a negation, within its clause.
_BEFORE, _AFTER = 4, 5
_CLAUSE = re.compile(r"[,;.!?()]|\b(?:and|but|while|whereas)\b")

Time = tuple[int, int, str | None]  # hour 0-11, minute, "am" / "pm" / None


def normalise(text: str) -> str:
    """Lower-case, money and punctuation flattened, number words as digits, spaces collapsed."""
    text = text.lower().replace("$", " ")
    text = re.sub(r"(?<=\d),(?=\d{3})", "", text)
    text = re.sub(r"[^\w\s]", " ", text)
    words = [_NUMBER_WORDS.get(w, w) for w in text.split() if w not in ("dollars", "bucks")]
    return " ".join(words)


def times_in(text: str) -> list[Time]:
    """Every clock time written in ``text`` (bare numbers without a period word are not times)."""
    return [time for _, _, time in time_spans(text)]


def time_spans(text: str) -> list[tuple[int, int, Time]]:
    """Every clock time written in ``text`` with its ``(start, end)`` character offsets."""
    lowered = text.lower()
    found: list[tuple[int, int, Time]] = []
    for match in _TIME.finditer(lowered):
        after = _AFTER_PERIOD.match(lowered[match.end() :])
        before = _BEFORE_PERIOD.search(lowered[max(0, match.start() - 16) : match.start()])
        marked = after or before
        period = marked["p"] if marked is not None else None
        if match["rel"]:
            hour, minute = int(_NUMBER_WORDS.get(match["rh"], match["rh"])), 0
            minute = {"quarter past": 15, "half past": 30, "quarter to": 45}[match["rel"]]
            if match["rel"] == "quarter to":
                hour -= 1
        else:
            if not (match["m"] or match["ap"] or period):
                continue
            hour, minute = int(match["h"]), int(match["m"] or 0)
        if hour > 24 or minute > 59:
            continue
        marker = (match["ap"] or "").replace(".", "")[:2] if not match["rel"] else ""
        ampm = marker if marker in ("am", "pm") else None
        if hour >= 13:
            ampm = "pm"
        elif ampm is None and period is not None:
            ampm = "am" if period == "morning" else "pm"
        found.append((match.start(), match.end(), (hour % 12, minute, ampm)))
    return found


def dates_in(text: str) -> list[tuple[int, int]]:
    """Every ``(month, day)`` written as "March 2nd" or "2nd of March" in ``text``."""
    return [date for _, _, date in date_spans(text)]


def month_name(number: int) -> str:
    """``3`` -> ``"March"``."""
    return _MONTH_NAMES.split()[number - 1].capitalize()


def ordinal(day: int) -> str:
    """``2`` -> ``"2nd"``."""
    suffix = "th" if 10 <= day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"


def date_in_words(month: int, day: int) -> str:
    """``(3, 2)`` -> ``"March 2nd"``, as SGD's systems say a date."""
    return f"{month_name(month)} {ordinal(day)}"


def date_spans(text: str) -> list[tuple[int, int, tuple[int, int]]]:
    """Every ``(month, day)`` in ``text`` with its ``(start, end)`` character offsets."""
    return [
        (m.start(), m.end(), (_MONTHS[m["m1"] or m["m2"]], int(m["d1"] or m["d2"])))
        for m in _DATE.finditer(text.lower())
    ]


def _same_time(a: Time, b: Time) -> bool:
    return a[:2] == b[:2] and (a[2] is None or b[2] is None or a[2] == b[2])


def flag_stems(slot: str) -> list[str]:
    """The five-letter stems that name a flag slot: its first and last key words, and synonyms.

    A last word that every request of the domain says does not count: ``shared_ride`` is
    named by "shared", not by "ride"; ``airport_shuttle`` by "airport" and "shuttle".
    """
    keys = [w for w in slot.lower().split("_") if w and w not in _FLAG_FILLER]
    heads = [w for w in keys[1:][-1:] if w not in _GENERIC_HEADS]
    words = [*keys[:1], *heads, *(syn for key in keys for syn in FLAG_SYNONYMS.get(key, ()))]
    return list(dict.fromkeys(w[:5] for w in words))


def flag_polarities(text: str, slot: str) -> list[bool]:
    """Each mention of the flag slot in ``text``: True when affirmed, False when negated.

    A negation counts within a few words of the key word and inside its clause: in "no shared
    ride and furnished", "no" does not reach "furnished".
    """
    stems = flag_stems(slot)
    if not stems:
        return []
    found = []
    for clause in _CLAUSE.split(text.lower()):
        words = normalise(clause).split()
        for index, word in enumerate(words):
            if any(word.startswith(stem) for stem in stems):
                around = words[max(0, index - _BEFORE) : index] + words[index + 1 : index + _AFTER]
                found.append(not any(w in _NEGATIONS for w in around))
    return found


def _flag_mentioned(value: str, text: str, slot: str) -> bool:
    wanted = value.lower() not in ("false", "none")
    return wanted in flag_polarities(text, slot)


def slot_value_mentioned(value: str, text: str, *, slot: str | None = None) -> bool:
    """Whether ``text`` mentions the slot value ``value`` (module doc); ``slot`` is for flags."""
    if value.strip().lower() in ("true", "false", "none"):
        return slot is not None and _flag_mentioned(value.strip(), text, slot)
    wanted = normalise(value)
    if wanted and f" {wanted} " in f" {normalise(text)} ":
        return True
    if not wanted:  # all punctuation ("-", "?"): read as written
        return bool(value.strip()) and value.strip().lower() in text.lower()
    value_times = times_in(value)
    if len(value_times) == 1 and any(_same_time(value_times[0], t) for t in times_in(text)):
        return True
    value_dates = dates_in(value)
    return len(value_dates) == 1 and value_dates[0] in dates_in(text)
