"""The guidance rubric's arithmetic (Listing 12 as the bundled sample's labels apply it).

Listing 12 asks for one 1-10 score and says to "deduct 2-4 (extremely bad) points" for each
criterion not met. The todeval team's labels make that checkable (see
``data/samples/proactive/README.md``): each of the five dimensions is scored 1-10, then

    deduction(d) = 0 if d >= 9, 1 if d in 7..8, 2 if d in 5..6, 3 if d in 3..4, 4 if d <= 2
    overall      = max(1, 10 - sum of deductions)

The engagement dimension is a pure function of the assistant's messages (at most 2 sentences
and at most 50 words each, read strictly), so it is computed here exactly as the team's anchors
state it. A paper's LLM judge is not expected to reproduce any of this: it outputs the overall.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

#: Words per message at most, and sentences (Listing 12, criterion 4).
MAX_WORDS = 50
MAX_SENTENCES = 2

# A sentence ends at . ! ? (runs of them) before a capital, a quote or the end; "e.g. the",
# "2.5", "p.m. today" do not end one.
_SENTENCE_END = re.compile(r"[.!?]+[\"')\]]*(?=\s+[A-Z0-9\"'(\[]|\s*$)")
_LIST_MARKER = re.compile(r"^\s*(\d+[.)]|[-*•])\s+")
_WORD = re.compile(r"[\w'’%£$€@#&/.:+-]*\w[\w'’%£$€@#&/.:+-]*")


def deduction(score: int) -> int:
    """Points one dimension's 1-10 score costs the overall (0 when met, 2-4 when not)."""
    if score >= 9:
        return 0
    if score >= 7:
        return 1
    if score >= 5:
        return 2
    if score >= 3:
        return 3
    return 4


def rubric_overall(dimensions: Mapping[str, int | None]) -> int:
    """10 minus the deductions of the scored dimensions (None: not scored, no deduction), >= 1."""
    return max(1, 10 - sum(deduction(d) for d in dimensions.values() if d is not None))


@dataclass(frozen=True)
class MessageLength:
    """How long one message is, as the engagement anchors count it."""

    words: int
    sentences: int

    @property
    def complies(self) -> bool:
        """At most 2 sentences and at most 50 words."""
        return self.words <= MAX_WORDS and self.sentences <= MAX_SENTENCES

    @property
    def marginal(self) -> bool:
        """Marginally over: 3 sentences within 55 words, or 51-55 words in at most 3."""
        return not self.complies and self.words <= 55 and self.sentences <= 3

    @property
    def clearly_over(self) -> bool:
        """56 or more words, or 4 or more sentences."""
        return not self.complies and not self.marginal


def message_length(text: str) -> MessageLength:
    """Words and sentences of a message; each line of a list counts as a sentence."""
    words = len(_WORD.findall(text))
    sentences = sum(
        1
        for line in text.splitlines()
        for piece in _SENTENCE_END.split(_LIST_MARKER.sub("", line))
        if _WORD.search(piece)
    )
    return MessageLength(words=words, sentences=sentences)


def engagement_score(messages: Sequence[str], *, unclear: bool = False) -> int:
    """The engagement dimension from the assistant's messages (the team's anchors).

    10 every message complies; 9 one marginally over; 8 one clearly over (whatever else is
    marginal) or two or more marginal; 7 two or more clearly over but under half the messages;
    6 clearly over in half the messages or more; 4 a message over 80 words, or every message
    clearly over; 3 every message over 80 words. ``unclear`` (the user said they cannot
    follow) caps it at 6.
    """
    lengths = [message_length(text) for text in messages]
    if not lengths:
        raise ValueError("engagement needs at least one assistant message")
    over = [m for m in lengths if m.clearly_over]
    marginal = [m for m in lengths if m.marginal]
    walls = [m for m in lengths if m.words > 80]
    if len(walls) == len(lengths) and len(lengths) > 1:
        score = 3
    elif walls or (len(lengths) > 1 and len(over) == len(lengths)):
        score = 4
    elif len(over) >= 2 and 2 * len(over) >= len(lengths):
        score = 6
    elif len(over) >= 2:
        score = 7
    elif len(over) == 1 or len(marginal) >= 2:
        score = 8
    elif len(marginal) == 1:
        score = 9
    else:
        score = 10
    return min(score, 6) if unclear else score
