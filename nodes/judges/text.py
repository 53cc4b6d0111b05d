"""Text helpers the local teachers' cue modules (Appendices A and B) share."""

from __future__ import annotations

import re


def cue(pattern: str) -> re.Pattern[str]:
    """``pattern`` compiled case-insensitively."""
    return re.compile(pattern, re.IGNORECASE)


#: A tool that hands the conversation to a person (tau2's ``transfer_to_human_agents``): it does
#: nothing for the user's goal itself, so its success is no evidence (goal tracking, goal success).
HAND_OVER_TOOL = cue(
    r"transfer\w*_to_(human|agent|person)|human|hand_?off|hand_?over|escalat|live_agent|"
    r"representative"
)

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
