"""A task user's facts: what ``known_info`` states, what an agent asks for, what is unknown.

AgentChangeBench and tau2 write ``known_info`` as free text; the local simulator reads labelled
facts out of it with the patterns below, so it states exactly those values when asked.
:func:`contradictions` applies the same patterns to a user message: a stated value that differs
from the known one is evidence that a simulator, not the agent, went wrong.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

# (?i:...) keeps the lead-in case-insensitive while a name must still start upper case.
_FACT_PATTERNS: dict[str, tuple[str, ...]] = {
    "name": (
        r"(?i:\byou are|\byour name is|\byou name is|\bmy name is|\bi am|\bi'm|\bthis is)\s+"
        r"(?P<value>[A-Z][A-Za-z'\u2019-]+(?: [A-Z][A-Za-z'\u2019-]+){1,3})",
    ),
    "phone_number": (r"(?i:phone(?: number)?(?: is)?:?)\s*(?P<value>\+?\d[\d ().-]{6,}\d)",),
    "date_of_birth": (
        r"(?i:date of birth|born on|birthday|\bdob)(?i: is)?:?\s*"
        r"(?P<value>\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}/\d{2,4}|[A-Z][a-z]+ \d{1,2},? \d{4})",
    ),
    "email": (r"(?P<value>[\w.+-]+@[\w-]+(?:\.[\w-]+)+)",),
    "zip_code": (r"(?i:zip(?: code)?(?: is)?:?)\s*(?P<value>\d{5})\b",),
    "user_id": (r"(?i:user ?id(?: is)?:?)\s*(?P<value>[a-z][a-z0-9]*_[a-z0-9_]+)",),
    "order_id": (r"(?P<value>#W\d{5,})",),
    "transaction_id": (r"(?P<value>\btx_[A-Za-z0-9]+)",),
    "confirmation_number": (
        r"(?i:confirmation|reservation)(?i: number| code| id)?(?i: is)?:?\s*"
        r"(?P<value>[A-Z0-9]{6})\b",
    ),
    "account_number": (
        r"(?i:account (?:#|number|no\.?))\s*(?i:is\s*)?(?P<value>\d{4,})",
        r"(?P<value>\bacc_[A-Za-z0-9]+)",
    ),
    "card_last_four": (r"(?i:card ending(?: in)?)\s*(?P<value>\d{4})\b",),
    "amount": (r"(?P<value>\$\d[\d,]*(?:\.\d{2})?)",),
    "merchant": (r"(?i:\bat|\bfrom) '(?P<value>[^']{2,60})'",),
}
_COMPILED = {kind: [re.compile(p) for p in patterns] for kind, patterns in _FACT_PATTERNS.items()}

_ASK_PATTERNS: dict[str, str] = {
    "name": r"\bname\b",
    "phone_number": r"\bphone|\bmobile|\bcell(?:ular)? number",
    "date_of_birth": r"date of birth|birth ?date|\bdob\b|birthday|\bborn\b",
    "email": r"\be-?mail",
    "zip_code": r"\bzip|postal code|post ?code",
    "user_id": r"\buser ?(?:id|name)\b|\busername|\bcustomer (?:id|number)|\bmember id",
    "order_id": r"\border (?:id|number|#)|\bwhich order",
    "transaction_id": r"\btransaction (?:id|number|reference)|\bwhich (?:transaction|charge)",
    "confirmation_number": r"\bconfirmation (?:number|code)|\breservation (?:id|number|code)|"
    r"\bbooking (?:reference|number|code)",
    "account_number": r"\baccount (?:number|#|no\b)|\bwhich account",
    "card_last_four": r"\blast (?:four|4)\b|\bcard number|\bwhich card",
    "amount": r"\bamount\b|\bhow much\b",
    "merchant": r"\bmerchant|\bwhich (?:store|shop)",
}
_ASKS = {kind: re.compile(p, re.IGNORECASE) for kind, p in _ASK_PATTERNS.items()}
_IDENTITY = re.compile(
    r"\bverify|\bverification|\bidentify|\bauthenticat|\bconfirm (?:your|who)|"
    r"\blook up your|\blocate your|\bfind your (?:account|profile)",
    re.IGNORECASE,
)
# A sentence is a request when it asks (?) or uses one of these.
_REQUEST = re.compile(
    r"\?|\b(?:please|could you|can you|may i|would you|provide|share|tell me|let me know|"
    r"confirm|verify|need your|need the|what is|what's)\b",
    re.IGNORECASE,
)
_CONFIRMATION = re.compile(
    r"\b(?:would you like me to|shall i|should i|do you want me to|can i go ahead|"
    r"may i proceed|is that (?:correct|right|ok)|do you confirm|please confirm|proceed)\b",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD = re.compile(r"[a-z]+")
_STOP_WORDS = frozenset(
    "about what when where which while with your that this have does from into them they "
    "there their than then know sure help need want".split()
)
IDENTITY_KINDS = (("name", "phone_number"), ("name", "zip_code"), ("user_id",), ("email",))
"""What the user states when asked to verify who they are: the first pair it knows."""


@dataclass(frozen=True)
class Contradiction:
    """A value a user message states that differs from the one ``known_info`` gives."""

    kind: str
    stated: str
    known: tuple[str, ...]


def known_facts(text: str) -> dict[str, tuple[str, ...]]:
    """Kind -> the values ``text`` states, in order of appearance, without repeats."""
    facts: dict[str, tuple[str, ...]] = {}
    for kind, patterns in _COMPILED.items():
        found = [m["value"].strip() for p in patterns for m in p.finditer(text)]
        values = tuple(dict.fromkeys(found))
        if values:
            facts[kind] = values
    return facts


def request_sentences(text: str) -> list[str]:
    """The sentences of an agent message that ask for something."""
    return [s for s in _SENTENCE.split(text) if s.strip() and _REQUEST.search(s)]


def kinds_asked(text: str, known: Mapping[str, Sequence[str]]) -> list[str]:
    """The fact kinds an agent message asks for, in a stable order.

    A request to verify the user's identity asks for the first of :data:`IDENTITY_KINDS` the
    user knows in full (else its first pair, which the user then cannot give).
    """
    asked: list[str] = []
    for sentence in request_sentences(text):
        asked += [kind for kind, pattern in _ASKS.items() if pattern.search(sentence)]
        if _IDENTITY.search(sentence):
            usable = [kinds for kinds in IDENTITY_KINDS if all(k in known for k in kinds)]
            asked += list(usable[0] if usable else IDENTITY_KINDS[0])
    return list(dict.fromkeys(asked))


def asks_confirmation(text: str) -> bool:
    """Whether an agent message asks the user to confirm an action."""
    return bool(_CONFIRMATION.search(text))


def unknown_topics(unknown_info: str, text: str) -> list[str]:
    """The phrases of ``unknown_info`` an agent's questions ask about (shared content words).

    Only questions count, and not offers to act ("Would you like me to file a dispute?"): the
    user is asked to *know* something, not to agree to something.
    """
    questions = [s for s in request_sentences(text) if "?" in s and not asks_confirmation(s)]
    asked = {w for s in questions for w in _content_words(s)}
    phrases = [p.strip() for p in re.split(r"[,;.]|\band\b", unknown_info) if p.strip()]
    # A phrase naming a fact kind ("You do not remember your email address") is declined as
    # that kind when asked (kinds_asked), not as a topic.
    topics = [p for p in phrases if not any(ask.search(p) for ask in _ASKS.values())]
    return [p for p in topics if _content_words(p) & asked]


def contradictions(known_info: str, said: str) -> list[Contradiction]:
    """Values ``said`` states for a known kind that match none of the known values."""
    known = known_facts(known_info)
    found = []
    for kind, values in known_facts(said).items():
        if kind not in known or kind == "amount":  # amounts differ for many honest reasons
            continue
        expected = {_normal(kind, v) for v in known[kind]}
        found += [
            Contradiction(kind, v, known[kind]) for v in values if _normal(kind, v) not in expected
        ]
    return found


def kind_in_words(kind: str) -> str:
    """``card_last_four`` -> "card's last four digits", ``user_id`` -> "user ID"."""
    return _KIND_WORDS.get(kind, kind.replace("_", " "))


_KIND_WORDS = {
    "user_id": "user ID",
    "order_id": "order ID",
    "transaction_id": "transaction ID",
    "card_last_four": "card's last four digits",
    "date_of_birth": "date of birth",
}


def _content_words(text: str) -> set[str]:
    return {w.rstrip("s") for w in _WORD.findall(text.lower()) if len(w) > 3} - _STOP_WORDS


def _normal(kind: str, value: str) -> str:
    if kind == "phone_number":
        return re.sub(r"\D", "", value)[-10:]  # "+1 555..." and "555-..." are one number
    if kind == "date_of_birth":  # "1982-03-09", "3/9/1982" and "March 9, 1982" are one date
        return _iso_date(value)
    return value.strip().lower()


_DATE_FORMATS = ("%Y-%m-%d", "%m/%d/%Y", "%m/%d/%y", "%B %d, %Y", "%B %d %Y", "%b %d, %Y")


def _iso_date(value: str) -> str:
    text = value.strip()
    for layout in _DATE_FORMATS:
        try:
            return datetime.datetime.strptime(text, layout).date().isoformat()
        except ValueError:
            continue
    return text.lower()
