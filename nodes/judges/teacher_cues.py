"""Text cues the local ``turn_quality`` teachers share (paper 004, Section 4.3, Appendices A-B).

Two families. *User signals* (Appendix A: rephrasing, abandonment, switches to search,
explicit feedback) are read from the message that follows a response. *Response signs* (the
Appendix B definitions: refusal, retrieval failure, system error, unsupported request) are read
from the response itself. Patterns are written from those definitions and from how people and
assistants talk in general (apologies, concessions, "never mind"), not from any one dataset.

Shared segmentation cues (acknowledgements, follow-ups, topic switches) come from
:mod:`nodes.judges.segmentation_features`. :class:`VectorTable` holds a chunk's MiniLM vectors
so the embedding teachers label thousands of turns per second after ``prepare``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Literal

import numpy as np

from nodes.judges.segmentation_features import USER_CUES, Embed, FloatArray, content_words

__all__ = [
    "ABANDONMENT",
    "ALTERNATIVES",
    "CAPABILITY_LIMIT",
    "COMPLAINT_CAUSES",
    "CONCESSION",
    "CORRECTION",
    "ERROR_CODE",
    "ERROR_TEXT",
    "NEGATIVE_FEEDBACK",
    "NO_RESULTS",
    "POSITIVE_FEEDBACK",
    "REFUSAL",
    "asks_user",
    "carries_domain",
    "content_words",
    "feedback_polarity",
    "is_acknowledgement",
    "is_clarification",
    "is_elliptic",
    "looks_cut_off",
    "makes_request",
    "sentences",
    "VectorTable",
]


def _cue(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


_I_WILL = r"\bi(?:'| wi)?ll\b"

# ---------------------------------------------------------------- user signals (Appendix A)

#: Explicit negative feedback and doubt about the previous answer.
NEGATIVE_FEEDBACK = _cue(
    r"\b(that'?s|thats|this is|it'?s|its|you'?re|you are|answer is) (not correct|"
    r"not true|not it|wrong|incorrect|inaccurate|outdated|useless|unhelpful|irrelevant)\b|"
    r"^\s*(wrong|incorrect|not quite)\b|\bnot what i\b|\b(useless|unhelpful)\b|"
    r"\b(wrong|incorrect|inaccurate|outdated) (answer|info|information|page|link|article|"
    r"document|doc|source|reply|response|policy|number|date|amount|one)\b|"
    r"\b(doesn'?t|does not|didn'?t|did not) (help|work|answer|make sense)\b|"
    r"\b(doesn'?t|does not|didn'?t|did not) (seem|sound|look) (right|correct)\b|"
    r"\bdon'?t think (that'?s|this is|that is|it'?s) (right|correct)\b|"
    r"\bnot (helpful|useful|correct|true|relevant)\b|\bno help\b|"
    r"\bnot right\b(?!\s+(now|away|this|at the moment|today))|"
    r"^\s*why (not|can'?t you|won'?t you|couldn'?t you|did you)\b|"
    r"\bare you sure\b|\bis that (right|correct|true)\?|\breally\s*\?|\bi thought\b|"
    r"\byou (didn'?t|did not|never) (answer|read|listen)\b|\bthat'?s not my question\b|"
    r"\b(ugh+|argh+|sigh|smh|ffs|seriously|come on|ridiculous|annoying|frustrating)\b|"
    r"\?\?|\bthumbs? ?down\b|👎|^\s*(please |pls |plz )?(try|do it|do that) again\b|"
    r"\bdid (it|that|this) (go through|work|get (saved|sent|submitted|done))\s*\?|"
    r"^\s*(hello|hi|hey|anyone|anybody)( there)?\s*\?+\s*$|\bstill there\s*\?"
)

#: The user correcting what the assistant took them to mean ("no, I meant ...").
CORRECTION = _cue(
    r"\bi (meant|mean|said|asked|was asking)\b|\bmisunderst|\bmisread\b|"
    r"\bi'?m (asking|talking) about\b|\bi was (asking|talking) about\b|"
    r"^\s*(no|nope|nah)\s*[,.!:-]|^\s*not\s+\S+\s*[,.;!-]|^\s*not\s+(the|my|a|an|that|this)\b|"
    r"\b(it'?s|its|i need|i want|i meant?|i asked( about| for)?|i'?m asking( about| for)?)\b"
    r"[^.?!]{1,40}?,?\s+not\s+(?!sure|yet|too|much|many|only|just|really|always)"
    r"(a |an |the |my |about |for )?\w+"
)

#: Giving up, or taking the need elsewhere (Appendix A: abandonment, switches to search).
ABANDONMENT = _cue(
    r"\b(never ?mind|nvm|nevermind|forget (it|about it|that)|give up|giving up|"
    r"not worth it)\b|"
    rf"{_I_WILL} (just |rather |probably )?(ask|call|email|contact|message|ping|check with|"
    r"go (to|ask)|figure|find it|google|search|look (it )?up)\b(?!\s+(you|for your|again|"
    r"later|at a later))|"
    rf"{_I_WILL} (just )?(do|handle|sort|book|file|sort) (it|this|that) (myself|my ?self|manually|"
    r"by hand|in person|elsewhere|at|some ?where|another way)\b|"
    r"\b(search|google|look) (it |that )?(up )?(myself|on my own|elsewhere)\b|"
    r"\b(ask|try) (someone|somebody|somewhere) else\b|\bgo elsewhere\b|"
    r"\b(just|i'?ll) (google|search)\b"
)

#: Asking for other options: browsing, not a complaint, however close to the last message.
ALTERNATIVES = _cue(
    r"\b(any ?other|anything else|something else|what else|other (options?|ones?|choices)|"
    r"more (options|results|choices)|alternatives?|a different one|another one)\b"
)

#: Explicit positive feedback: thanks, praise, "that worked".
POSITIVE_FEEDBACK = _cue(
    r"\b(thanks|thank you|thank u|thx|thnx|ty|tysm|cheers|appreciated?|perfect|great|awesome|"
    r"excellent|brilliant|fantastic|wonderful|amazing|helpful|that helps|that worked|"
    r"(it|that|this) work(s|ed)|worked|working now|got it|makes sense|exactly|spot on|sorted|"
    r"solved|fixed|cool|nice|lovely|good to know|that answers)\b|"
    r"\bthumbs? ?up\b|[👍🙏🙌👌✅💯🎉😊🙂]"
)

#: What a complaint says went wrong, by root-cause code (checked in this order).
COMPLAINT_CAUSES: dict[str, re.Pattern[str]] = {
    "E5": _cue(
        r"\bcut (off|short)\b|\bgot cut\b|\b(incomplete|unfinished|truncated|half (a |an )?"
        r"(answer|message|reply|sentence))\b|\bdidn'?t (finish|complete)\b|"
        r"\b(blank|empty|no) (answer|reply|response|message)\b|"
        r"^\s*(hello|hi|anyone)( there)?\s*\?+\s*$|\bstill there\s*\?|\bstopped mid"
    ),
    "E6": _cue(
        r"\bwrong (department|team|bot|agent|person|group|desk|area|section|place|channel|"
        r"queue)\b|\bnot (the )?(right|correct) (department|team|bot|agent|person|group|desk)\b|"
        r"\b(transfer|route|redirect) me\b"
    ),
    "E3": _cue(
        r"\b(page|link|article|doc|document|source|kb|policy|snippet|citation)s? "
        r"(you )?(linked|sent|cited|quoted|shared|showed|says|said)\b|"
        r"\bwrong (page|link|article|doc|document|source|policy|kb)\b|\boutdated\b"
    ),
    "E2": _cue(
        r"^\s*why (not|can'?t you|won'?t you|couldn'?t you)\b|\byou (should|must) (be able to|"
        r"know)\b|\bjust (answer|tell me)\b|\bwhy the refusal\b"
    ),
    "E1": _cue(
        r"\bmisunderst|\bmisread\b|\bnot what i (asked|meant|said|wanted)\b|"
        r"\bi (meant|mean|said|asked|was asking)\b|\bthat'?s not my question\b|"
        r"\bi'?m (asking|talking) about\b|\bi was (asking|talking) about\b|"
        r"\byou (didn'?t|did not) (understand|get it)\b"
    ),
}

# ---------------------------------------------------------------- response signs (Appendix B)

#: A refusal: the assistant declines to help or answer.
REFUSAL = _cue(
    r"\b(i'?m|i am) (sorry|afraid),? (but )?i (can'?t|cannot|can not|won'?t|am unable|'?m unable)"
    r"\b|^\s*(sorry,?\s*)?i (can'?t|cannot|can not|won'?t) (help|assist|answer|provide|discuss|"
    r"share|give|comment|advise)\b|\bi'?m (not able|unable|not allowed|not permitted) to "
    r"(help|assist|answer|provide|discuss|share|give|comment|advise)\b|"
    r"\bi (can'?t|cannot) (help|assist) (you )?with (that|this)\b|"
    r"\bnot something i('?m| am)? (can|able to) (help|assist)\b"
)

#: The assistant stating a capability it lacks or that the request is out of its scope (E7).
CAPABILITY_LIMIT = _cue(
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
NO_RESULTS = _cue(
    r"\b(couldn'?t|could not|can'?t|cannot|didn'?t|did not|was unable to|wasn'?t able to|"
    r"am unable to|'?m unable to) (find|locate|retrieve|get|come up with) (any|anything|"
    r"information|info|results?|details|documents?|articles?|pages?|a match|matches)\b|"
    r"\bno (relevant )?(results|information|info|documents|articles|pages|matches|records|"
    r"entries|data) (were |was )?(found|available|matching|about|on|for)\b|"
    r"\b(i )?(don'?t|do not) have (any )?(information|info|details|data) (about|on)\b|"
    r"\bnothing (came up|was found|matched|matching)\b"
)

#: Error strings: an HTTP status, an exception, a service outage, an ALL_CAPS error code.
ERROR_TEXT = _cue(
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
CONCESSION = _cue(
    r"\byou'?re (absolutely |quite )?right\b|\byou are (absolutely |quite )?right\b|"
    r"\bmy (mistake|bad|error)\b|"
    r"\bsorry (for|about) (the|that|my) (confusion|mix-?up|misunderstanding|error|mistake)\b|"
    r"\bi misunderst|\bi misread\b|\blet me correct\b|\bto correct (my|the) "
)

_ACK_WORDS = frozenset(
    "ok okay k kk okey alright right sure yes yeah yep yup no nope thanks thank you thx ty tysm "
    "cheers great perfect cool nice awesome good fine got it thats that's is all everything "
    "bye goodbye cya wonderful excellent amazing lovely brilliant sounds will do np noted "
    "understood lol haha much very so appreciated appreciate a lot done for the help "
    "see ya have day worked works working useful helps helped nvm nevermind".split()
)
_WORD = re.compile(r"[a-z0-9']+")
_LEADING_ACK = _cue(
    r"^\s*((ok(ay)?|k|kk|great|thanks|thx|cool|alright|right|ugh|hmm|oh|yes|yeah|sure|fine)"
    r"\b[\s,.!:;-]*)+"
)
_SENTENCE = re.compile(r"[^.!?]+[.!?]*")
_TERMINAL = re.compile(r"[.!?…)\]\"'”’»*`]\s*$|[\U0001F300-\U0001FAFF\u2600-\u27BF]\s*$")
#: Words an English statement does not end on: articles, conjunctions, possessives and the
#: prepositions that are not also verb particles ("log in", "sign up" end fine). A reply that
#: stops on one was cut off mid-sentence.
_DANGLING = frozenset(
    "a an the and or but nor because if than whereas whether whose of to for with from at "
    "into onto between via per your my our their its his her these those each every "
    "including such".split()
)
#: A sentence that opens like a question may end on a preposition ("where are you going to").
_OPENER = _cue(r"^\s*((and|so|but|then|also|or|btw|plus)\b[\s,:-]*)+")
_QUESTION_OPENING = _cue(
    r"^\s*(which|what|whats|when|where|wheres|who|whom|whose|whos|how|hows|why|do|does|did|"
    r"are|is|was|were|can|could|"
    r"would|will|shall|should|may|have|has)\b"
)
_ASKS_USER = _cue(
    r"^\s*(which|what|when|where|who|whom|how (many|much|long|often)|do you|did you|are you|"
    r"were you|is it|is this|is that|would you|could you|can you|will you|shall i|should i|"
    r"may i|have you|does it|do they|is your|are they|any (preference|particular))\b|"
    r"\b(please (confirm|specify|provide|tell me|let me know)|could you (tell|give|confirm|"
    r"clarify|share)|can you (tell|give|confirm|clarify|share))\b"
)


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` (split after ``.``, ``!``, ``?``), stripped, non-empty."""
    return [part.strip() for part in _SENTENCE.findall(text) if part.strip()]


def is_acknowledgement(text: str) -> bool:
    """True for a message with no request in it: thanks, "ok", an emoji, a goodbye."""
    words = _WORD.findall(text.lower())
    if not words:
        return bool(text.strip())  # emoji or punctuation only
    if "?" in text:
        return False
    return all(word in _ACK_WORDS for word in words) or (
        bool(USER_CUES["closing"].search(text)) and not content_words(text) - _ACK_WORDS
    )


def is_elliptic(text: str) -> bool:
    """True when a message leans on the previous one for its meaning.

    A follow-up opener after any leading "ok"/"thanks" ("ok and does it ...", "what about
    contractors?"), a reference back with at most four content words ("how long are those"),
    or at most two content words at all ("jury duty?").
    """
    core = _LEADING_ACK.sub("", text)
    words = content_words(core)
    return (
        len(words) <= 2
        or bool(USER_CUES["follow_up"].search(core))
        or (bool(USER_CUES["anaphora"].search(core)) and len(words) <= 4)
    )


def makes_request(message: str) -> bool:
    """True when a user message asks or requests something (a question, "can you", "I need").

    Any sentence counts, read past a leading "ok"/"thanks" and "and"/"also": "ok. also do we
    have ..." asks; "ok, found it in the portal" does not.
    """
    if "?" in message:
        return True
    for sentence in sentences(message) or [message]:
        core = _OPENER.sub("", _LEADING_ACK.sub("", sentence))
        if USER_CUES["request"].search(core) or _QUESTION_OPENING.search(core):
            return True
    return False


def carries_domain(message: str) -> bool:
    """True when a message names its own topic: not a follow-up, thanks or complaint."""
    return not (
        is_acknowledgement(message)
        or is_elliptic(message)
        or NEGATIVE_FEEDBACK.search(message)
        or CORRECTION.search(message)
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
    words = _WORD.findall(text.lower())
    if not words or words[-1] not in _DANGLING:
        return False
    last = sentences(text)[-1] if sentences(text) else text
    return not _QUESTION_OPENING.search(last)


def feedback_polarity(metadata: Mapping[str, Any]) -> Literal["positive", "negative"] | None:
    """Explicit feedback on a turn (``metadata["feedback"]``): thumbs, likes, ratings.

    Accepts strings (``thumbs_down``, ``dislike``, ``negative``, ``👎``), booleans and numbers
    (positive > 0 > negative); anything else is no feedback.
    """
    value = metadata.get("feedback")
    if isinstance(value, bool):
        return "positive" if value else "negative"
    if isinstance(value, int | float):
        return "positive" if value > 0 else "negative" if value < 0 else None
    if not isinstance(value, str):
        return None
    text = value.lower()
    if re.search(r"down|dislike|negative|bad|unhelpful|👎|-1", text):
        return "negative"
    if re.search(r"up|like|positive|good|helpful|👍|\+1|love", text):
        return "positive"
    return None


class VectorTable:
    """MiniLM vectors of a chunk's texts, embedded in one batch by a teacher's ``prepare``.

    Labelling then only looks vectors up (thousands of turns per second); a text that was not
    prepared is embedded on the spot (the embedder's disk cache makes repeats cheap). Each
    :meth:`load` replaces the table, so memory stays bounded by one chunk.

    Args:
        embed: The embedding function; default MiniLM (:func:`stores.embeddings.get_embedder`),
            loaded on first use, never at import time.
    """

    def __init__(self, embed: Embed | None = None) -> None:
        self._embed = embed
        self._table: dict[str, FloatArray] = {}

    def embed(self, texts: list[str]) -> FloatArray:
        """Embed ``texts`` with the configured function (rows L2-normalised)."""
        if self._embed is None:
            from stores.embeddings import get_embedder

            self._embed = get_embedder().embed
        return self._embed(texts)

    def load(self, texts: Iterable[str]) -> None:
        """Embed the distinct ``texts`` in one batch and keep them as the current table."""
        unique = list(dict.fromkeys(texts))
        vectors = self.embed(unique) if unique else np.zeros((0, 384), np.float32)
        self._table = dict(zip(unique, vectors, strict=True))

    def get(self, texts: list[str]) -> FloatArray:
        """Vectors for ``texts``, shape ``(len(texts), dim)``, from the table where possible."""
        table = self._table  # one reference: a concurrent load() swaps, never mutates
        missing = list(dict.fromkeys(t for t in texts if t not in table))
        found = dict(zip(missing, self.embed(missing), strict=True)) if missing else {}
        rows = [table[t] if t in table else found[t] for t in texts]
        return np.stack(rows) if rows else np.zeros((0, 384), np.float32)
