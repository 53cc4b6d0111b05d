"""What the user's message says: the cues both goal-success roles read (paper 004, §4.1, App. A).

*New-goal cues* (Section 4.1: "another question", "also", a request, a greeting, an answer to
the assistant's question, a follow-up or a reference back) are read by the segmenters and, for
acknowledgements, follow-ups and topic switches, by the local teachers. *User signals*
(Appendix A: rephrasing, abandonment, switches to search, explicit feedback) are read from the
message that follows a response: negative and positive feedback, corrections, giving up, asking
for alternatives, what a complaint says went wrong, and whether a message acknowledges, leans
on the previous one, asks something or names its own topic. Patterns are written from those
definitions and from how people talk in general (apologies, "never mind"), not from any one
dataset.

The response's own signs are in :mod:`nodes.goal_success.judges.response_cues`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from todeval.nodes.judges.text import QUESTION_OPENING, WORD, cue, sentences

#: An explicit announcement of a new topic: the paper's "Now I have another question...".
EXPLICIT_SWITCH = cue(
    r"\b(another|one more|different|separate|new|unrelated|other) (question|thing|topic|"
    r"request|issue|query|matter)\b|\bby the way\b|\bbtw\b|\bon a different note\b|"
    r"\bunrelated\b|\bswitching (gears|topics?)\b|\bone more\b"
)

#: New-goal cues in the user's message (Section 4.1).
USER_CUES: dict[str, re.Pattern[str]] = {
    "explicit_switch": EXPLICIT_SWITCH,
    "also": cue(r"\balso\b|\banother\b|\bas well\b"),
    "request": cue(
        r"\b(i want|i need|i would like|i'd like|i wanna|can you|could you|can i|could i|"
        r"help me|i'm looking for|i am looking for|find me|get me|show me|tell me|how do i|"
        r"how can i|where can i|what is|what's|is there|are there|book|reserve|schedule)\b"
    ),
    "greeting": cue(r"^\s*(hi|hello|hey|good (morning|afternoon|evening))\b"),
    "answer_like": cue(
        r"^\s*(yes|yeah|yep|yup|no|nope|nah|correct|right|sure|ok|okay|fine|great|perfect|"
        r"that('s| is) (right|correct|fine|good|perfect|great)|that works|sounds good|"
        r"please do|go ahead|do it|confirm)\b"
    ),
    "anaphora": cue(r"\b(it|that|this|they|them|those|these|there|its|their|one)\b"),
    "follow_up": cue(r"^\s*(and|what about|how about|what if|but|so|then|or)\b"),
    "closing": cue(
        r"\b(thanks|thank you|thx|ty|cheers|that('s| is) all|bye|goodbye|nothing else)\b"
    ),
    "negative_feedback": cue(
        r"\b(not what i|wrong|incorrect|doesn't help|didn't help|did not help|i meant|"
        r"i mean|that's not|not helpful|you misunderstood|again)\b"
    ),
}

_STOPWORDS = frozenset(
    "a an the i me my we our you your it its is are was were be been do does did to of in on "
    "at for with and or but if so this that these those there here what whats what's how when "
    "where which who why can could would will should may might please thanks thank just also "
    "any some about from by as up out not no yes ok okay".split()
)


def content_words(text: str) -> set[str]:
    """Lower-cased words of three or more letters that are not stop words."""
    return {w for w in WORD.findall(text.lower()) if w not in _STOPWORDS and len(w) > 2}


_I_WILL = r"\bi(?:'| wi)?ll\b"

#: Explicit negative feedback and doubt about the previous answer.
NEGATIVE_FEEDBACK = cue(
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

_I_MEANT = r"\bi (meant|mean|said|asked|was asking)\b|\bmisunderst|\bmisread\b"

#: The user saying outright what they meant or that they were misread ("I meant ...").
EXPLICIT_CORRECTION = cue(_I_MEANT)

#: The user correcting what the assistant took them to mean ("no, I meant ...").
CORRECTION = cue(
    _I_MEANT + "|"
    r"\bi'?m (asking|talking) about\b|\bi was (asking|talking) about\b|"
    r"^\s*(no|nope|nah)\s*[,.!:-]|^\s*not\s+\S+\s*[,.;!-]|^\s*not\s+(the|my|a|an|that|this)\b|"
    r"\b(it'?s|its|i need|i want|i meant?|i asked( about| for)?|i'?m asking( about| for)?)\b"
    r"[^.?!]{1,40}?,?\s+not\s+(?!sure|yet|too|much|many|only|just|really|always)"
    r"(a |an |the |my |about |for )?\w+"
)

#: Giving up, or taking the need elsewhere (Appendix A: abandonment, switches to search).
ABANDONMENT = cue(
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
ALTERNATIVES = cue(
    r"\b(any ?other|anything else|something else|what else|other (options?|ones?|choices)|"
    r"more (options|results|choices)|alternatives?|a different one|another one)\b"
)

#: Explicit positive feedback: thanks, praise, "that worked".
POSITIVE_FEEDBACK = cue(
    r"\b(thanks|thank you|thank u|thx|thnx|ty|tysm|cheers|appreciated?|perfect|great|awesome|"
    r"excellent|brilliant|fantastic|wonderful|amazing|helpful|that helps|that worked|"
    r"(it|that|this) work(s|ed)|worked|working now|got it|makes sense|exactly|spot on|sorted|"
    r"solved|fixed|cool|nice|lovely|good to know|that answers)\b|"
    r"\bthumbs? ?up\b|[👍🙏🙌👌✅💯🎉😊🙂]"
)

#: What a complaint says went wrong, by root-cause code (checked in this order).
COMPLAINT_CAUSES: dict[str, re.Pattern[str]] = {
    "E5": cue(
        r"\bcut (off|short)\b|\bgot cut\b|\b(incomplete|unfinished|truncated|half (a |an )?"
        r"(answer|message|reply|sentence))\b|\bdidn'?t (finish|complete)\b|"
        r"\b(blank|empty|no) (answer|reply|response|message)\b|"
        r"^\s*(hello|hi|anyone)( there)?\s*\?+\s*$|\bstill there\s*\?|\bstopped mid"
    ),
    "E6": cue(
        r"\bwrong (department|team|bot|agent|person|group|desk|area|section|place|channel|"
        r"queue)\b|\bnot (the )?(right|correct) (department|team|bot|agent|person|group|desk)\b|"
        r"\b(transfer|route|redirect) me\b"
    ),
    "E3": cue(
        r"\b(page|link|article|doc|document|source|kb|policy|snippet|citation)s? "
        r"(you )?(linked|sent|cited|quoted|shared|showed|says|said)\b|"
        r"\bwrong (page|link|article|doc|document|source|policy|kb)\b|\boutdated\b"
    ),
    "E2": cue(
        r"^\s*why (not|can'?t you|won'?t you|couldn'?t you)\b|\byou (should|must) (be able to|"
        r"know)\b|\bjust (answer|tell me)\b|\bwhy the refusal\b"
    ),
    "E1": cue(
        _I_MEANT + "|"
        r"\bnot what i (asked|meant|said|wanted)\b|\bthat'?s not my question\b|"
        r"\bi'?m (asking|talking) about\b|\bi was (asking|talking) about\b|"
        r"\byou (didn'?t|did not) (understand|get it)\b"
    ),
}

_ACK_WORDS = frozenset(
    "ok okay k kk okey alright right sure yes yeah yep yup no nope thanks thank you thx ty tysm "
    "cheers great perfect cool nice awesome good fine got it thats that's is all everything "
    "bye goodbye cya wonderful excellent amazing lovely brilliant sounds will do np noted "
    "understood lol haha much very so appreciated appreciate a lot done for the help "
    "see ya have day worked works working useful helps helped nvm nevermind".split()
)
_LEADING_ACK = cue(
    r"^\s*((ok(ay)?|k|kk|great|thanks|thx|cool|alright|right|ugh|hmm|oh|yes|yeah|sure|fine)"
    r"\b[\s,.!:;-]*)+"
)
#: Leading conjunctions ("and", "so", "also", "btw") that :func:`makes_request` reads past.
_OPENER = cue(r"^\s*((and|so|but|then|also|or|btw|plus)\b[\s,:-]*)+")


def is_acknowledgement(text: str) -> bool:
    """True for a message with no request in it: thanks, "ok", an emoji, a goodbye."""
    words = WORD.findall(text.lower())
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
        if USER_CUES["request"].search(core) or QUESTION_OPENING.search(core):
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
    if _NEGATIVE_FEEDBACK.search(text):
        return "negative"
    if _POSITIVE_FEEDBACK.search(text):
        return "positive"
    return None


# Whole words, so "upset" is not "up"; a negation before a positive word makes it negative
# ("not helpful", "no good").
_NEGATIVE_FEEDBACK = re.compile(
    r"\b(thumbs?[\s_-]?down|down|dislike[ds]?|unliked|negative|bad|unhelpful|useless|wrong)\b|"
    r"\b(not|no|never|isn't|wasn't)\b[\s\w']{0,12}\b(good|helpful|useful|great|liked?)\b|"
    r"👎|-1"
)
_POSITIVE_FEEDBACK = re.compile(
    r"\b(thumbs?[\s_-]?up|up|liked?|positive|good|great|helpful|useful|love[ds]?)\b|👍|\+1"
)
