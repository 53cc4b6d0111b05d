"""Text helpers the local teachers' cue modules (Appendices A and B) share."""

from __future__ import annotations

import re


def cue(pattern: str) -> re.Pattern[str]:
    """``pattern`` compiled case-insensitively."""
    return re.compile(pattern, re.IGNORECASE)


#: A lower-cased word (letters, digits, apostrophes).
WORD = re.compile(r"[a-z0-9']+")
_SENTENCE = re.compile(r"[^.!?]+[.!?]*")
#: A sentence that opens like a question may end on a preposition ("where are you going to").
QUESTION_OPENING = cue(
    r"^\s*(which|what|whats|when|where|wheres|who|whom|whose|whos|how|hows|why|do|does|did|"
    r"are|is|was|were|can|could|"
    r"would|will|shall|should|may|have|has)\b"
)


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` (split after ``.``, ``!``, ``?``), stripped, non-empty."""
    return [part.strip() for part in _SENTENCE.findall(text) if part.strip()]
