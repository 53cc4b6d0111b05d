"""The local bank builder's reading of a stored session: slot values said in the dialogue.

MAP's bank is built from each stored session (paper 001, §3.2, App. B.4): the paper's GPT-4
generator reads the dialogue. The local builder does the same without a model
(:func:`dialogue_slot_values`), slot by slot of the session's task attributes:

- times, dates, counts, flags and sums as the local intent capture reads them off a context
  (:func:`~nodes.memory.judges.intent_capture.features.context_values`); a date that names no
  calendar day ("next friday") is not stored, the session's own day being unknown;
- with a schema, the categorical values the dialogue names word for word
  (:func:`~evals.datasets.sgd_schema.stated_values`);
- names and places (:func:`named_values`): capitalised phrases of the user's and the
  system's utterances (dates, street addresses and the schema's categorical values left out).
  A place slot takes the last phrase said after "in" or "near" (after "from" or "to" for an
  origin or a destination slot). A name slot takes the last phrase said beside its own words
  ("the song Blocks", "Abercorn House is a 1 star hotel"), else one name slot takes the first
  phrase of the latest sentence that has one (the system's latest offer is the one the user
  takes).

The task attributes are the schema's slots of the session's service and intent; without a
schema, the slot *names* of the session's task goal (what to look for, never the values). A
value the dialogue does not say is not stored: the bank holds what was said, and a session's
task goal (the values its confirmation holds) is the ``task_goal_oracle`` bank
(:mod:`nodes.memory.settings`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from todeval.evals.datasets.sgd_schema import ServiceSchema, stated_values
from todeval.evals.memory_schema import MsTodSession
from todeval.evals.memory_words import slot_kind
from todeval.evals.metrics.memory.slot_mention import date_spans
from todeval.nodes.judges.text import sentences
from todeval.nodes.memory.judges.intent_capture.features import context_values
from todeval.nodes.memory.judges.intent_capture.local import slot_kinds
from todeval.nodes.memory.judges.intent_capture.when import time_and_date_spans
from todeval.nodes.memory.judges.planning import task_attributes

#: A capitalised word (or a number inside a name: "Route 66", "45 Park Lane").
_WORD = re.compile(r"[A-Z0-9][\w'&.-]*|&")
#: Lower-case words that may stand inside a name ("Bank of America", "Eagles vs Cowboys").
_JOINERS = frozenset({"of", "the", "and", "&", "de", "la", "del", "du", "vs", "on", "at", "n"})
#: Capitalised words that open sentences or name no entity.
_NOT_NAMES = frozenset(
    """i i'm i'd i'll i've please okay ok sure yes yeah yep no nope great thanks thank hi hello
    hey yup nah the a an that that's this it it's its what what's when where which who how can could
    would will do does did is are was were there there's your you you're my we we're let find
    book get just also and but so then fine good perfect sounds sound correct done not any
    anything alright cool nice awesome wonderful excellent is have has had may might should
    shall i'm how's here here's one two three four five six seven eight nine ten first second
    last next am pm ok. oh well right now new all both each every some other another how about
    reserve search look show buy rent play make set schedule check tell give send transfer
    confirm confirmed certainly absolutely unfortunately sorry may whats lets also""".split()
)
_MONTHS_AND_DAYS = frozenset(
    """january february march april may june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday today tomorrow tonight""".split()
)
_PREPOSITIONS = ("in", "near", "around", "from", "to", "at", "on")
_PLACE_CUE = re.compile(rf"\b({'|'.join(_PREPOSITIONS)})\s*$", re.IGNORECASE)
#: A number with a unit ("3-star", "2-bedroom"): a feature, not a name.
_NUMBER_WORD = re.compile(r"^\d+(?:st|nd|rd|th)?(?:-|$)", re.IGNORECASE)
#: The last word of a street address ("Church Street"): a place the system describes, no name.
_STREET = re.compile(
    r"\b(street|st|avenue|ave|road|rd|boulevard|blvd|way|drive|dr|parkway|highway|suite)\.?$",
    re.IGNORECASE,
)
#: Words before and after a phrase that say what it is ("the song Blocks", "Abercorn House is a
#: 1 star hotel"), searched for a slot's words.
_BEFORE_WORDS, _AFTER_WORDS = 3, 5
#: Prepositions after which a phrase is a place, never a name ("in San Jose").
_PLACE_ONLY = ("in", "near", "around", "from")
_SENTENCES_PER_UTTERANCE = 1000  # orders phrases by (utterance, sentence)
_FROM_WORDS = frozenset({"from", "origin", "departure", "leaving", "pickup", "start", "source"})
_TO_WORDS = frozenset({"to", "destination", "where", "arrival", "dropoff", "end"})
_GENERIC_SLOT_WORDS = frozenset({"name", "of", "the", "number"})


@dataclass(frozen=True)
class Phrase:
    """A capitalised phrase of the dialogue and the words it stood beside."""

    text: str
    cue: str
    """The word just before it (``in``, ``from``...), lower-cased, or ``""``."""
    sentence: str
    """Its sentence, lower-cased."""
    before: str
    """The few words of its sentence just before it, lower-cased."""
    after: str = ""
    """The few words of its sentence just after it, lower-cased ("... is a 1 star hotel")."""
    number: int = 0
    """Which sentence of the dialogue it stands in (a later sentence, a later offer)."""


def phrases(text: str) -> list[Phrase]:
    """Capitalised phrases of an utterance in order, dates, times and sentence openers left out."""
    for start, end in time_and_date_spans(text):
        text = text[:start] + "," * (end - start) + text[end:]  # a date ends a phrase
    found: list[Phrase] = []
    for number, sentence in enumerate(sentences(text)):
        tokens = list(re.finditer(r"[\w'&.-]+|[,;:()]", sentence))
        run: list[re.Match[str]] = []
        for token in [*tokens, None]:
            word = token.group() if token is not None else ""
            capital = bool(_WORD.fullmatch(word)) and not _NUMBER_WORD.match(word)
            if token is not None and (capital or (run and word.lower() in _JOINERS)):
                run.append(token)
                continue
            found.extend(replace(p, number=number) for p in _phrase(sentence, run))
            run = []
    return found


def _phrase(sentence: str, run: Sequence[re.Match[str]]) -> list[Phrase]:
    words = list(run)
    while words and words[-1].group().lower() in _JOINERS:
        words.pop()  # "Saffron Table at" -> "Saffron Table"
    cue = ""
    while words and _not_a_name(words[0].group(), opens=not sentence[: words[0].start()].strip()):
        dropped = words.pop(0).group().lower()
        cue = dropped if dropped in _PREPOSITIONS else ""  # "From San Diego."
    if not words or all(w.group().replace(".", "").isdigit() for w in words):
        return []
    start, end = words[0].start(), words[-1].end()
    opener = not sentence[:start].strip()
    if opener and len(words) == 1 and sentence[end:].strip(" .!?") and sentence[end] != ",":
        return []  # "Doors open at 6:30": one capital word opening a sentence is no name
    text = sentence[start:end].rstrip(".")
    if len(text) < 2:
        return []
    if _STREET.search(text):
        return []
    before = _PLACE_CUE.search(sentence[:start])
    cue = before.group(1).lower() if before else cue
    words_before = " ".join(sentence[:start].lower().split()[-_BEFORE_WORDS:])
    words_after = " ".join(sentence[end:].lower().split()[:_AFTER_WORDS])
    return [
        Phrase(
            text=text, cue=cue, sentence=sentence.lower(), before=words_before, after=words_after
        )
    ]


def _not_a_name(word: str, *, opens: bool) -> bool:
    """A leading word that is not part of a name (an opener, a month, a joiner, a number)."""
    lowered = word.lower().rstrip(".")
    if lowered == "the" and not opens:
        return False  # "at The Larimer Lodge": a capital "The" inside a sentence is the name's
    if opens and lowered.endswith(("ed", "ing", "ly")):
        return True  # "Booked Sino", "Leaving Oakland", "Finally ...": a verb or adverb opens
    return (
        lowered in _NOT_NAMES
        or lowered in _MONTHS_AND_DAYS
        or lowered in _JOINERS
        or lowered in _PREPOSITIONS
        or lowered.isdigit()
    )


def _direction(slot: str) -> str:
    """``from`` for an origin slot, ``to`` for a destination slot, else ``""``."""
    words = set(slot.lower().split("_"))
    return "from" if words & _FROM_WORDS else "to" if words & _TO_WORDS else ""


def _slot_words(slot: str) -> set[str]:
    return {w for w in slot.lower().split("_") if w not in _GENERIC_SLOT_WORDS and len(w) > 2}


def named_values(
    utterances: Sequence[str], slots: Sequence[str], *, not_names: Iterable[str] = ()
) -> dict[str, str]:
    """The names and places ``utterances`` say for ``slots`` (see the module docstring).

    Args:
        utterances: The session's utterances in order.
        slots: The name and place slots to fill (others are ignored).
        not_names: Phrases that are no name (a schema's categorical values: "Pop", "Psychologist").
    """
    excluded = {value.lower() for value in not_names}
    said = [
        replace(phrase, number=at * _SENTENCES_PER_UTTERANCE + phrase.number)
        for at, utterance in enumerate(utterances)
        for phrase in phrases(utterance)
        if phrase.text.lower() not in excluded
    ]
    found: dict[str, str] = {}
    taken: set[str] = set()
    places = [s for s in slots if slot_kind(s) == "place"]
    names = [s for s in slots if slot_kind(s) == "name"]
    for slot in places:
        direction = _direction(slot)
        wanted = (direction,) if direction else ("in", "near", "around")
        opposite = "to" if wanted == ("from",) else "from"
        cued = [p for p in said if p.cue in wanted and p.text not in taken]
        if not cued and not any(_direction(s) == opposite for s in places):
            cued = [p for p in said if p.cue in ("in", "near", "around") and p.text not in taken]
        if cued:
            found[slot] = cued[-1].text
            taken.add(cued[-1].text)
    # "tickets to Jordan Rakei": a phrase after "to", "at" or "on" may name the thing itself
    free = [p for p in said if p.cue not in _PLACE_ONLY and p.text not in taken]
    for slot in names:
        words = _slot_words(slot)
        beside = [
            p
            for p in free
            if p.text not in taken and any(w in p.before or w in p.after for w in words)
        ]
        if beside:
            found[slot] = beside[-1].text
            taken.add(beside[-1].text)
    for slot in names:
        rest = [p for p in free if p.text not in taken]
        if slot not in found and rest:
            last = max(p.number for p in rest)
            chosen = next(p for p in rest if p.number == last)  # the latest offer's first name
            found[slot] = chosen.text
            taken.add(chosen.text)
            break  # one name slot takes an unexplained phrase; the others stay unsaid
    return found


def session_attributes(
    session: MsTodSession, schema: Mapping[str, ServiceSchema] | None
) -> list[str]:
    """The slots to read off the session.

    The schema's slots for its service and intent, else the names (never the values) of its
    task goal's slots.
    """
    return task_attributes(
        session.intent,
        schema=schema,
        service=session.domain,
        known_slots=list(session.task_goal),
    )


def dialogue_slot_values(
    session: MsTodSession, schema: Mapping[str, ServiceSchema] | None = None
) -> dict[str, str]:
    """Slot -> value the stored session's dialogue says, in attribute order (module doc)."""
    attributes = session_attributes(session, schema)
    spec = schema.get(session.domain or "") if schema is not None else None
    utterances = [turn.utterance for turn in session.content]
    text = "\n".join(utterances)
    kinds = slot_kinds(attributes, (), spec)
    found = {
        slot: value
        for slot, value in context_values(text, kinds, generic=False).items()
        if kinds.get(slot) != "date" or date_spans(value)  # "next friday": no calendar day
    }
    categorical: list[str] = []
    if spec is not None:
        found |= stated_values(spec, session.intent, text)
        categorical = [v for s in spec.slots if s.is_categorical for v in s.possible_values]
    open_slots = [s for s in attributes if s not in found and kinds.get(s) == "other"]
    found |= named_values(utterances, open_slots, not_names=categorical)
    return {slot: found[slot] for slot in attributes if found.get(slot)}
