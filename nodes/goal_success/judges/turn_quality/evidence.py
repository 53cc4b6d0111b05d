"""What the learned turn-quality teachers read: a turn's view and three blocks of evidence.

Turn *k* is seen as a :class:`TurnView`: the request ``u``, the reply ``r``, the previous reply,
the earlier user messages and the user's next message ``n`` (None on the last turn). Every
vector is the project's MiniLM embedding (L2-normalised, so a dot product is a cosine).

* **R** (reply alone, 389): MiniLM(r) and five shape signs that do not depend on a domain's
  reply style: empty, ends on terminal punctuation, ends on a dangling word, an error code or
  template leak (``ALL_CAPS_CODE``, ``{slot}``, a trailing ``null``), at most three words.
* **C** (fit, 394): MiniLM(u)*MiniLM(r); cos(u, r), cos(previous reply, r), the highest cosine
  of r to the last three earlier user messages, a first-turn flag; and how the reply's typed
  values relate to everything the user said (:func:`value_relation`).
* **N** (reaction, 784): MiniLM(n), MiniLM(n)*MiniLM(r); cos(n, u), cos(n, r), the highest
  cosine of n to the request and the last three earlier messages (repetition, rephrase); n's
  shape; values of n that contradict the reply's ("no, 2 people" after "a table for 3"); the
  share of n's values the user had already given. Zeros on the last turn.

The typed values (times, dates, money, counts, names) are generic patterns, not a dataset's
slots. Length, digit share and value counts were left out: they are out of distribution on
long enterprise answers. Training (``scripts/train_turn_quality.py``) and inference build the
blocks with the same :func:`evidence_blocks`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from todeval.evals.schema import Dialogue
from todeval.stores.embeddings import EMBEDDING_DIM

FloatArray = NDArray[np.float32]
Vectors = Callable[[list[str]], FloatArray]
"""Texts in, one L2-normalised MiniLM row per text out (e.g. ``VectorTable.get``)."""

BLOCKS = ("R", "C", "N")
"""The evidence blocks, in the order the model files store them."""

HISTORY = 3
"""Earlier user messages the fit and reaction blocks compare against."""

_WORD = re.compile(r"[A-Za-z0-9']+")
_DANGLING = frozenset(
    "a an the and or but of to for with from at in on your my our their is are was be".split()
)
_TYPES = ("time", "date", "money", "count")
_NUMBERS = "one two three four five six seven eight nine ten eleven twelve".split()
_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:tember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_DAYS = "monday tuesday wednesday thursday friday saturday sunday today tomorrow tonight".split()
_DAY = rf"(?:{'|'.join(_DAYS)})"
_UNITS = (
    r"people|persons?|adults?|guests?|tickets?|seats?|rooms?|nights?|days?|stops?|beds?|"
    r"baths?|bedrooms?|passengers?"
)
VALUE_PATTERNS: dict[str, re.Pattern[str]] = {
    "time": re.compile(
        r"\b(\d{1,2}(?::\d\d)?\s*(?:am|pm|a\.m\.|p\.m\.)|\d{1,2}:\d\d|"
        rf"(?:{'|'.join(_NUMBERS)})\s+(?:am|pm|o'?clock)|noon|midnight)\b",
        re.IGNORECASE,
    ),
    "date": re.compile(
        rf"\b({_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?"
        rf"{_MONTH}|{_DAY}|(?:the\s+)?\d{{1,2}}(?:st|nd|rd|th)(?:\s+of\s+(?:this|next)\s+month)?)\b",
        re.IGNORECASE,
    ),
    "money": re.compile(
        r"(\$\s?\d[\d,]*(?:\.\d+)?|\b\d[\d,]*(?:\.\d+)?\s?(?:dollars|usd|pounds|euros|%))",
        re.IGNORECASE,
    ),
    "count": re.compile(rf"\b(\d+|{'|'.join(_NUMBERS)})\s+(?:{_UNITS})\b", re.IGNORECASE),
    # capitalised multi-word names not at the start of the text
    "name": re.compile(r"(?<=[a-z,] )((?:[A-Z][\w'&.-]+)(?:\s+(?:[A-Z][\w'&.-]+|of|the|de|&))*)"),
}
"""Typed value spans: group 1 of each match is the value (the one group: see typed_values).

A case-insensitive pattern is written in lower case, and one that finds values without a digit
lists their words in ``_WORDS_WITHOUT_DIGITS`` (:func:`typed_values` relies on both).
"""

TypedValues = dict[str, frozenset[str]]
"""A text's canonical typed values by type (:func:`typed_values`)."""


@dataclass(frozen=True)
class TurnView:
    """Everything a learned teacher may read about turn *k*.

    ``prev_response`` is "" on the first turn; ``next_user`` (the reaction) None on the last.
    """

    user: str
    response: str
    prev_response: str = ""
    history: tuple[str, ...] = ()
    next_user: str | None = None


def turn_views(dialogue: Dialogue) -> list[TurnView]:
    """One view per turn of ``dialogue``, in order."""
    users = [turn.user_msg for turn in dialogue.turns]
    replies = [turn.response for turn in dialogue.turns]
    return [
        TurnView(
            user=user,
            response=response,
            prev_response=replies[k - 1] if k else "",
            history=tuple(users[:k]),
            next_user=users[k + 1] if k + 1 < len(users) else None,
        )
        for k, (user, response) in enumerate(zip(users, replies, strict=True))
    ]


def view_texts(views: Sequence[TurnView]) -> list[str]:
    """The distinct non-empty texts :func:`evidence_blocks` embeds for ``views``."""
    texts: list[str] = []
    for view in views:
        texts += [view.user, view.response, view.prev_response, *view.history[-HISTORY:]]
        if view.next_user is not None:
            texts.append(view.next_user)
    return [text for text in dict.fromkeys(texts) if text]


# canonical_value's rewrites, compiled once: it runs on every typed value found.
_SPACES = re.compile(r"\s+")
_ORDINAL = re.compile(r"(\d)(st|nd|rd|th)\b")
_LEADING_THE = re.compile(r"^the ")
# One pass for the number words: a word becomes digits, which are word characters too, so the
# word boundaries the other number words need are the same before and after each replacement.
_NUMBER_WORD = re.compile(rf"\b({'|'.join(_NUMBERS)})\b")
_DIGIT_OF = {word: str(digit) for digit, word in enumerate(_NUMBERS, start=1)}
_ON_THE_HOUR = re.compile(r"(\d):00")
_SPACE_BEFORE_MERIDIEM = re.compile(r"\s+(am|pm)")
_PARTY = re.compile(r"\s+(people|persons?|adults?|guests?|tickets?|seats?|passengers?)$")


# Values recur (days, times, party sizes: about one SGD dev value in seven is new): a bounded
# memo of the last thousand spares their seven rewrites (a few tens of kilobytes).
@functools.lru_cache(maxsize=1 << 10)
def canonical_value(value: str) -> str:
    """One spelling per value: ``"7:00 p.m."`` -> ``"7pm"``, "three guests" -> "3 people"."""
    text = _SPACES.sub(" ", value.lower().strip().replace("a.m.", "am").replace("p.m.", "pm"))
    text = _ORDINAL.sub(r"\1", text)
    text = _LEADING_THE.sub("", text)
    text = _NUMBER_WORD.sub(lambda word: _DIGIT_OF[word.group(1)], text)
    text = _ON_THE_HOUR.sub(r"\1", text)
    text = _SPACE_BEFORE_MERIDIEM.sub(r"\1", text)
    return _PARTY.sub(" people", text)


@functools.lru_cache(maxsize=1 << 8)
def typed_values(text: str) -> TypedValues:
    """The canonical typed values of ``text`` by type (types without a value are left out).

    Remembered for the last 256 texts (stock phrases recur across a corpus); the values are
    only read, never changed.
    """
    found: TypedValues = {}
    for kind, pattern, scanned in _scans(text):
        # A pattern has one group, so findall gives each match's group 1 (no match objects).
        spans = frozenset(map(canonical_value, pattern.findall(scanned)))
        if spans:
            found[kind] = spans
    return found


# Two shortcuts for an ASCII text, where the case-insensitive patterns' letters match plain
# ASCII letters only and lower-casing moves no character (the same spans, lower-cased, which
# canonical_value does to every value anyway):
# * the case-insensitive patterns, written in lower case, read the lower-cased text
#   case-sensitively: the same matches, found about twice as fast;
# * most messages have no digit, and without one those patterns find a value only in a whole
#   word (between word boundaries, or a boundary and a space): a time in "noon", "midnight" or
#   a number word ("seven pm"), a date in a day ("tomorrow"), a count in a number word ("two
#   people"); money always has a digit. A type none of whose words the text has is not scanned.
_LOWER_CASE_PATTERNS = {
    kind: re.compile(pattern.pattern)
    for kind, pattern in VALUE_PATTERNS.items()
    if pattern.flags & re.IGNORECASE
}
_DIGIT = re.compile(r"\d")
_WORD_RUN = re.compile(r"\w+")
_WORDS_WITHOUT_DIGITS = {
    "time": frozenset([*_NUMBERS, "noon", "midnight"]),
    "date": frozenset(_DAYS),
    "money": frozenset(),
    "count": frozenset(_NUMBERS),
}


def _scans(text: str) -> list[tuple[str, re.Pattern[str], str]]:
    """The scans :func:`typed_values` makes of ``text``: (type, pattern, text it reads)."""
    if not text.isascii():
        return [(kind, pattern, text) for kind, pattern in VALUE_PATTERNS.items()]
    lowered = text.lower()
    words = None if _DIGIT.search(text) else set(_WORD_RUN.findall(lowered))
    scans = []
    for kind, pattern in VALUE_PATTERNS.items():
        spelled = _WORDS_WITHOUT_DIGITS.get(kind)
        if words is not None and spelled is not None and words.isdisjoint(spelled):
            continue  # no digit and none of the words: no value of this type
        if kind in _LOWER_CASE_PATTERNS:
            scans.append((kind, _LOWER_CASE_PATTERNS[kind], lowered))
        else:
            scans.append((kind, pattern, text))
    return scans


def merged_values(values: Iterable[TypedValues]) -> TypedValues:
    """Several texts' typed values (:func:`typed_values`), merged by type."""
    merged: TypedValues = {}
    for found in values:
        for kind, spans in found.items():
            merged[kind] = merged.get(kind, frozenset()) | spans
    return merged


def value_relation(mine: TypedValues, reference: TypedValues) -> list[float]:
    """How a text's typed values ``mine`` relate to ``reference``'s (6 numbers).

    Per type (time, date, money, count): the text states a value of a type the reference has
    and none of them matches (a conflict); then the share of the text's values the reference
    has, and whether the text has any value at all.
    """
    if not mine:  # most texts state no value (about three in five on SGD dev): no conflict
        return [0.0] * 6
    conflicts = [
        float(kind in mine and kind in reference and not mine[kind] & reference[kind])
        for kind in _TYPES
    ]
    shared = sum(len(spans & reference.get(kind, frozenset())) for kind, spans in mine.items())
    total = sum(len(spans) for spans in mine.values())
    return [*conflicts, shared / total if total else 0.0, float(total > 0)]


_ENDS_TERMINAL = re.compile(r"[.!?)\"'*]\s*$")
_ENDS_SENTENCE = re.compile(r"[.!?]\s*$")
_LEAK = re.compile(r"\b[A-Z]{2,}(?:_[A-Z0-9]+)+\b|[{}]|\b(?:null|none|undefined|nan)\s*$")
# shape() reads the patterns above on a stripped text, whose last character is not whitespace
# (str.strip and \s agree on it, and there is no newline left for $ to stop before): a pattern
# that ends in "\s*$" then asks about the last character only, and _LEAK can match only a text
# with "_", a brace, or one of its last words at the end. Tested against the patterns.
_TERMINAL_CHARS = frozenset(".!?)\"'*")
_SENTENCE_CHARS = frozenset(".!?")
_LEAK_ENDS = ("null", "none", "undefined", "nan")


def _may_leak(stripped: str) -> bool:
    """False where ``_LEAK`` cannot match ``stripped`` (a stripped text)."""
    return "_" in stripped or "{" in stripped or "}" in stripped or stripped.endswith(_LEAK_ENDS)


def shape(text: str) -> list[float]:
    """Five shape signs of a message that do not depend on a domain's length or style."""
    stripped = text.strip()
    words = _WORD.findall(stripped)
    last = stripped[-1:]  # "" for an empty text, in neither set
    return [
        float(not words),
        float(last in _TERMINAL_CHARS),  # _ENDS_TERMINAL
        float(bool(words) and words[-1].lower() in _DANGLING and last not in _SENTENCE_CHARS),
        float(_may_leak(stripped) and bool(_LEAK.search(stripped))),
        float(len(words) <= 3),
    ]


N_DIM = 2 * EMBEDDING_DIM + 3 + 5 + 6 + 2
"""Width of the reaction block."""


@dataclass(frozen=True)
class EvidenceBlocks:
    """The blocks R, C, N of a batch of views, one row per view (N zero without a next message)."""

    R: FloatArray
    C: FloatArray
    N: FloatArray
    has_next: NDArray[np.bool_]

    def block(self, name: str) -> FloatArray:
        """The block called ``name`` (``R``, ``C`` or ``N``)."""
        found: FloatArray = getattr(self, name)
        return found


def evidence_blocks(views: Sequence[TurnView], vectors: Vectors) -> EvidenceBlocks:
    """The R, C and N blocks of ``views`` (texts embedded through ``vectors`` in one call).

    The vector parts of the blocks (a message's vector, elementwise products) are worked out
    for every view at once; the numbers per view (cosines, shapes, value relations) row by
    row, then rounded to float32 together (each a python float rounded once, as before).
    """
    if not views:
        return EvidenceBlocks(
            R=np.zeros((0, EMBEDDING_DIM + 5), np.float32),
            C=np.zeros((0, EMBEDDING_DIM + 10), np.float32),
            N=np.zeros((0, N_DIM), np.float32),
            has_next=np.zeros(0, dtype=bool),
        )
    texts = view_texts(views)
    zero = np.zeros(EMBEDDING_DIM, np.float32)
    # The texts' vectors and, last, the zero vector of an empty text (or none): each column of
    # views is gathered from it in one step (the same rows np.stack made of them one by one).
    matrix = np.concatenate([vectors(texts), zero[None, :]]) if texts else zero[None, :]
    row_of = {text: row for row, text in enumerate(texts)}
    empty = len(texts)

    def gather(column: Iterable[str | None]) -> FloatArray:
        rows: FloatArray = matrix[[row_of[text] if text else empty for text in column]]
        return rows

    # typed_values remembers recent texts: a user message is read again by every later turn
    # (what the user said so far), a reply by its own turn and the next message's.
    typed = typed_values
    said = _SaidSoFar(typed)

    user_vecs = gather(view.user for view in views)
    reply_vecs = gather(view.response for view in views)
    next_vecs = gather(view.next_user for view in views)  # zero without a next message
    previous_vecs = gather(view.prev_response for view in views)
    # Every dot product of the blocks, a column of views at a time: np.vecdot computes each
    # row's product with the kernel a @ b uses for two vectors, so each keeps its bits.
    earlier = [view.history[-HISTORY:] for view in views]
    slots = [
        gather(texts[slot] if slot < len(texts) else "" for texts in earlier)
        for slot in range(max(map(len, earlier)))
    ]
    user_reply = np.vecdot(user_vecs, reply_vecs).tolist()
    previous_reply = np.vecdot(previous_vecs, reply_vecs).tolist()
    next_user = np.vecdot(next_vecs, user_vecs).tolist()
    next_reply = np.vecdot(next_vecs, reply_vecs).tolist()
    earlier_reply = [np.vecdot(vectors, reply_vecs).tolist() for vectors in slots]
    earlier_next = [np.vecdot(vectors, next_vecs).tolist() for vectors in slots]

    numbers_r, numbers_c, numbers_n, has_next = [], [], [], []
    no_reaction = [0.0] * (N_DIM - 2 * EMBEDDING_DIM)
    for i, view in enumerate(views):
        so_far = said.of((*view.history, view.user))
        read = range(len(earlier[i]))
        numbers_r.append(shape(view.response))
        numbers_c.append(
            [
                user_reply[i],
                previous_reply[i],
                max([earlier_reply[slot][i] for slot in read], default=0.0),
                float(not view.history),
                *value_relation(typed(view.response), so_far),
            ]
        )
        if view.next_user is None:
            numbers_n.append(no_reaction)
            has_next.append(False)
            continue
        numbers_n.append(
            [
                next_user[i],
                next_reply[i],
                max([earlier_next[slot][i] for slot in read] + [next_user[i]]),
                *shape(view.next_user),
                *value_relation(typed(view.next_user), typed(view.response)),
                *value_relation(typed(view.next_user), so_far)[4:],
            ]
        )
        has_next.append(True)
    reacted = np.array(has_next, dtype=bool)
    reaction = np.concatenate(
        [next_vecs, next_vecs * reply_vecs, np.asarray(numbers_n, np.float32)], axis=1
    )
    reaction[~reacted] = 0.0  # +0.0 throughout (a zero vector times a reply can give -0.0)
    return EvidenceBlocks(
        R=np.concatenate([reply_vecs, np.asarray(numbers_r, np.float32)], axis=1),
        C=np.concatenate([user_vecs * reply_vecs, np.asarray(numbers_c, np.float32)], axis=1),
        N=reaction,
        has_next=reacted,
    )


class _SaidSoFar:
    """The merged typed values of a run of user messages, each prefix merged once.

    A dialogue's views read the messages of turns 1..k for every k: merging the new message
    into the previous prefix's values gives the same sets as merging them all.
    """

    def __init__(self, typed: Callable[[str], TypedValues]) -> None:
        self._typed = typed
        self._merged: dict[tuple[str, ...], TypedValues] = {(): {}}

    def of(self, messages: tuple[str, ...]) -> TypedValues:
        """``merged_values`` of the messages' typed values."""
        known = len(messages)
        while messages[:known] not in self._merged:
            known -= 1
        merged = self._merged[messages[:known]]
        for end in range(known + 1, len(messages) + 1):
            merged = merged_values([merged, self._typed(messages[end - 1])])
            self._merged[messages[:end]] = merged
        return merged
