"""Requests in user utterances: cues and the normalised request clause (schema-free goals).

Without a schema, the goal extractor turns a user request ("I need a hotel in Chicago") into a
goal described by its request clause ("a hotel in chicago"); acknowledgements, answers to the
system's questions and small talk are not requests.
"""

from __future__ import annotations

import re

from todeval.nodes.judges.text import cue, sentences

#: A request: the user wants something done or found.
REQUEST_CUE = cue(
    r"\b(i|we)( would|'d) (like|love)\b|\b(i|we) (want|need|wanna|have to)\b|"
    r"\b(i'm|i am|we're|we are) (looking|searching|trying) (for|to)\b|"
    r"\b(can|could|would|will) you\b|\bplease\b|\b(help|let) me\b|"
    r"^\s*(find|search|look|book|reserve|buy|get|show|play|rent|schedule|call|set|transfer|"
    r"check|make|order)\b|\bi'm interested in\b|\bis it possible to\b"
)
#: A task verb: strong enough to read as a new request even right after a system question.
TASK_VERB = cue(
    r"\b(find|search|look (for|up)|book|reserve|buy|purchase|rent|schedule|play|transfer|"
    r"call|order|make a (reservation|booking|payment|transfer|appointment)|get me)\b"
)
_FILLER = cue(
    r"^(hi|hello|hey|ok|okay|yes|yeah|sure|great|well|so|and|also|thanks|thank you|please)"
    r"\b[\s,!.]*"
)
_PREFIX = cue(
    r"^(i|we)( would|'d) (like|love)( you)?( to)?\s+|^(i|we) (want|need|wanna|have)( you)?( to)?"
    r"\s+|^(i'm|i am|we're|we are) (looking|searching|trying) (for|to)\s+|"
    r"^(can|could|would|will) you( please)?\s+|^please\s+|^(help|let) me( to)?\s+|"
    r"^i'm interested in\s+|^is it possible to\s+"
)


def request_clause(text: str) -> str | None:
    """The request clause of ``text``, normalised ("a hotel in chicago"), or None if none.

    The first sentence with a request cue, lower-cased, without greetings, politeness and
    the "I would like to" / "can you" frame, and without trailing punctuation.
    """
    for sentence in sentences(text):
        if not REQUEST_CUE.search(sentence):
            continue
        clause = sentence.lower().strip()
        for pattern in (_FILLER, _FILLER, _PREFIX, _PREFIX):
            clause = pattern.sub("", clause).strip(" ,")
        clause = re.sub(r"\s+", " ", clause).rstrip(" .!?,")
        clause = re.sub(r"[\s,]+please$", "", clause)
        if len(clause.split()) >= 2:
            return clause
    return None


def is_request(text: str, previous_system: str) -> bool:
    """A request, not an answer to the system's question nor an acknowledgement."""
    if not REQUEST_CUE.search(text):
        return False
    answering = "?" in previous_system and not re.search(r"anything else", previous_system, re.I)
    return not answering or bool(TASK_VERB.search(text))
