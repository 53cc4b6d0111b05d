"""What the assistant's reply says: the cues both goal-success roles read (paper 004, App. B).

*Reply cues* (Section 4.1: the reply before a message asks a question, offers more help, asks
for confirmation, reports a task done) tell the segmenters how a message may follow it.
*Response signs* (the Appendix B definitions: refusal, retrieval failure, system error,
unsupported request) are read by the local teachers from the response itself: refusals,
capability limits, "nothing found", error text and codes, a concession of a previous mistake, a
clarifying question back to the user, a reply cut off mid-sentence. Patterns are written from
those definitions and from how assistants talk in general (apologies, concessions), not from
any one dataset.

The user's message is read by :mod:`nodes.goal_success.judges.user_cues`.
"""

from __future__ import annotations

import re

from todeval.nodes.judges.text import QUESTION_OPENING, WORD, cue, sentences

#: Cues in the assistant's reply just before the user's message (Section 4.1).
PREVIOUS_REPLY_CUES: dict[str, re.Pattern[str]] = {
    "asks_question": cue(r"\?\s*$|\?\s+\S"),
    "offers_more_help": cue(
        r"\b(anything else|something else|else (i|can i|may i)|more help|further (help|"
        r"assistance)|other questions?|help (you )?with anything)\b"
    ),
    "asks_confirmation": cue(
        r"\b(please confirm|confirm|is that (right|correct|ok)|correct\?|shall i|should i|"
        r"do you want me to|would you like me to)\b"
    ),
    "reports_done": cue(
        r"\b(done|booked|reserved|submitted|confirmed|has been|have been|successfully|"
        r"is all set|you're all set)\b"
    ),
}

#: A refusal: the assistant declines to help or answer.
REFUSAL = cue(
    r"\b(i'?m|i am) (sorry|afraid),? (but )?i (can'?t|cannot|can not|won'?t|am unable|'?m unable)"
    r"\b|^\s*(sorry,?\s*)?i (can'?t|cannot|can not|won'?t) (help|assist|answer|provide|discuss|"
    r"share|give|comment|advise)\b|\bi'?m (not able|unable|not allowed|not permitted) to "
    r"(help|assist|answer|provide|discuss|share|give|comment|advise)\b|"
    r"\bi (can'?t|cannot) (help|assist) (you )?with (that|this)\b|"
    r"\bnot something i('?m| am)? (can|able to) (help|assist)\b"
)

#: The assistant stating a capability it lacks or that the request is out of its scope (E7).
CAPABILITY_LIMIT = cue(
    r"\b(isn'?t|is not) something i('?m| am)? (can|able to) (?!help|assist)|"
    r"\bi (don'?t|do not) (have the ability|support|have access)\b|"
    r"\b(not|isn'?t) supported\b|\bunsupported\b|\b(outside|beyond|out of) (of )?(what i "
    r"can|my (scope|area|remit|capabilit|abilit)|the scope|scope)|"
    r"\bi can only (help|assist|answer)\b|"
    r"\bi can help with (questions|things|requests) (about|on|related)\b|"
    r"\bi'?m (not able|unable) to (?!help|assist|answer|provide|discuss|share|give|comment|"
    r"advise|find|locate)[a-z]+\b|\b(can'?t|cannot) (do|perform|send|make|place|translate|"
    r"write|call|order|buy|pay|sign|access) (that|this|it|messages|calls|orders|text)\b"
)

#: Nothing was retrieved (E4).
NO_RESULTS = cue(
    r"\b(couldn'?t|could not|can'?t|cannot|didn'?t|did not|was unable to|wasn'?t able to|"
    r"am unable to|'?m unable to) (find|locate|retrieve|get|come up with) (any|anything|"
    r"information|info|results?|details|documents?|articles?|pages?|a match|matches)\b|"
    r"\bno (relevant )?(results|information|info|documents|articles|pages|matches|records|"
    r"entries|data) (were |was )?(found|available|matching|about|on|for)\b|"
    r"\b(i )?(don'?t|do not) have (any )?(information|info|details|data) (about|on)\b|"
    r"\bnothing (came up|was found|matched|matching)\b"
)

#: Error strings: an HTTP status, an exception, a service outage, an ALL_CAPS error code.
ERROR_TEXT = cue(
    r"\berror\b\s*[:#(]?\s*\d{3}\b|\b(error|exception|traceback)\s*:|"
    r"\b(internal server error|service unavailable|bad gateway|gateway time-?out|"
    r"(request|connection|service|server|call|operation) (has )?timed out|something went wrong|"
    r"an error (has )?occurred|unexpected error|temporarily unavailable)\b|\{\{|\}\}|"
    r"\b(http|status( code)?)\s*[45]\d\d\b|\b(request|operation|call|action) failed\b|"
    r"\b(request|action|operation|submission|update) (could not|couldn'?t|can'?t|cannot) be "
    r"(completed|processed|submitted|saved)\b"
)

#: An error code in capitals, such as ``LEAVE_API_UNAVAILABLE`` (case-sensitive).
ERROR_CODE = re.compile(r"\b[A-Z][A-Z0-9]+(?:_[A-Z0-9]+)+\b")

#: The assistant conceding that its previous reply was wrong (a repair the user prompted).
CONCESSION = cue(
    r"\byou'?re (absolutely |quite )?right\b|\byou are (absolutely |quite )?right\b|"
    r"\bmy (mistake|bad|error)\b|"
    r"\bsorry (for|about) (the|that|my) (confusion|mix-?up|misunderstanding|error|mistake)\b|"
    r"\bi misunderst|\bi misread\b|\blet me correct\b|\bto correct (my|the) "
)

_TERMINAL = re.compile(r"[.!?…)\]\"'”’»*`]\s*$|[\U0001F300-\U0001FAFF\u2600-\u27BF]\s*$")
#: Words an English statement does not end on: articles, conjunctions, possessives and the
#: prepositions that are not also verb particles ("log in", "sign up" end fine). A reply that
#: stops on one was cut off mid-sentence.
_DANGLING = frozenset(
    "a an the and or but nor because if than whereas whether whose of to for with from at "
    "into onto between via per your my our their its his her these those each every "
    "including such".split()
)
_ASKS_USER = cue(
    r"^\s*(which|what|when|where|who|whom|how (many|much|long|often)|do you|did you|are you|"
    r"were you|is it|is this|is that|would you|could you|can you|will you|shall i|should i|"
    r"may i|have you|does it|do they|is your|are they|any (preference|particular))\b|"
    r"\b(please (confirm|specify|provide|tell me|let me know)|could you (tell|give|confirm|"
    r"clarify|share)|can you (tell|give|confirm|clarify|share))\b"
)


def asks_user(sentence: str) -> bool:
    """True when ``sentence`` is a question addressed to the user (asks for information)."""
    return sentence.rstrip().endswith("?") and bool(_ASKS_USER.search(sentence))


def is_clarification(response: str, *, max_statement_words: int = 8) -> bool:
    """True when the reply mainly asks the user something (a clarifying question).

    The reply ends on a question to the user and says little else: at most
    ``max_statement_words`` words outside its questions ("Sure. Which building?").
    """
    parts = sentences(response)
    if not parts or not asks_user(parts[-1]):
        return False
    statement_words = sum(len(part.split()) for part in parts if not part.endswith("?"))
    return statement_words <= max_statement_words


def looks_cut_off(response: str) -> bool:
    """True when the reply stops mid-sentence.

    It ends without terminal punctuation *and* on a word no sentence ends on (an article,
    preposition, conjunction, auxiliary), or on a comma, dash or opening bracket. A missing
    final full stop alone is not enough: about 10% of SGD's complete system replies lack one.
    """
    text = response.rstrip()
    if not text or _TERMINAL.search(text):
        return False
    if text[-1] in ",;:-–—(&+":
        return True
    words = WORD.findall(text.lower())
    if not words or words[-1] not in _DANGLING:
        return False
    last = (sentences(text) or [text])[-1]
    return not QUESTION_OPENING.search(last)
