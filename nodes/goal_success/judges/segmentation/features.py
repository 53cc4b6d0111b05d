"""Features for local goal segmentation, from the signals paper 004 (Section 4.1) names.

For each turn j >= 2 the question is whether the user's message starts a new information need.
The signals: lexical cues ("another question", "also"), whether the user is answering the
assistant's question, how the assistant's previous reply ended ("anything else?"), topic change
between consecutive turns (MiniLM cosine, and the share of new content words), and time gaps.

Every feature is *relational* or *act-like* (similarities, cue flags, similarity to a few
dialogue-act prototypes), never a raw embedding: raw vectors let a model trained on SGD
memorise SGD's services and fail on other domains (measured: F1 0.97 on SGD dev but 0.22 on
the enterprise sample). Time gaps are applied by the judge as a shift of the odds, because SGD,
the training data, has no timestamps.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from todeval.evals.schema import Dialogue
from todeval.nodes.judges.vectors import Embed, FloatArray


def _cue(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


#: An explicit announcement of a new topic: the paper's "Now I have another question...".
EXPLICIT_SWITCH = _cue(
    r"\b(another|one more|different|separate|new|unrelated|other) (question|thing|topic|"
    r"request|issue|query|matter)\b|\bby the way\b|\bbtw\b|\bon a different note\b|"
    r"\bunrelated\b|\bswitching (gears|topics?)\b|\bone more\b"
)

#: Cues in the user's message.
USER_CUES: dict[str, re.Pattern[str]] = {
    "explicit_switch": EXPLICIT_SWITCH,
    "also": _cue(r"\balso\b|\banother\b|\bas well\b"),
    "request": _cue(
        r"\b(i want|i need|i would like|i'd like|i wanna|can you|could you|can i|could i|"
        r"help me|i'm looking for|i am looking for|find me|get me|show me|tell me|how do i|"
        r"how can i|where can i|what is|what's|is there|are there|book|reserve|schedule)\b"
    ),
    "greeting": _cue(r"^\s*(hi|hello|hey|good (morning|afternoon|evening))\b"),
    "answer_like": _cue(
        r"^\s*(yes|yeah|yep|yup|no|nope|nah|correct|right|sure|ok|okay|fine|great|perfect|"
        r"that('s| is) (right|correct|fine|good|perfect|great)|that works|sounds good|"
        r"please do|go ahead|do it|confirm)\b"
    ),
    "anaphora": _cue(r"\b(it|that|this|they|them|those|these|there|its|their|one)\b"),
    "follow_up": _cue(r"^\s*(and|what about|how about|what if|but|so|then|or)\b"),
    "closing": _cue(
        r"\b(thanks|thank you|thx|ty|cheers|that('s| is) all|bye|goodbye|nothing else)\b"
    ),
    "negative_feedback": _cue(
        r"\b(not what i|wrong|incorrect|doesn't help|didn't help|did not help|i meant|"
        r"i mean|that's not|not helpful|you misunderstood|again)\b"
    ),
}

#: Cues in the assistant's reply just before the user's message.
PREVIOUS_REPLY_CUES: dict[str, re.Pattern[str]] = {
    "asks_question": _cue(r"\?\s*$|\?\s+\S"),
    "offers_more_help": _cue(
        r"\b(anything else|something else|else (i|can i|may i)|more help|further (help|"
        r"assistance)|other questions?|help (you )?with anything)\b"
    ),
    "asks_confirmation": _cue(
        r"\b(please confirm|confirm|is that (right|correct|ok)|correct\?|shall i|should i|"
        r"do you want me to|would you like me to)\b"
    ),
    "reports_done": _cue(
        r"\b(done|booked|reserved|submitted|confirmed|has been|have been|successfully|"
        r"is all set|you're all set)\b"
    ),
}

#: Dialogue-act prototypes for user messages: a message's act is read as its highest cosine
#: to each group (a zero-shot act tagger that works in any domain).
USER_ACT_PROTOTYPES: dict[str, tuple[str, ...]] = {
    "topic_switch": (
        "I have another question.",
        "Unrelated, but I have a different question.",
        "By the way, something different.",
        "One more thing I need help with.",
    ),
    "new_request": (
        "I also need to book something else.",
        "Can you also help me find something?",
        "Now I want to do something else.",
        "Thanks. I'm also looking for a different service.",
        "I need help with something new as well.",
    ),
    "act_on_offer": (
        "Yes, please book it.",
        "That one sounds good, I'll take it.",
        "Please go ahead and reserve that for me.",
        "Book it for two people at 7 pm.",
    ),
    "change_details": (
        "Can we make it a different time instead?",
        "Actually, change it to the next day.",
        "What about a cheaper one?",
    ),
    "affirm": (
        "Yes, that's correct.",
        "Yes please, go ahead.",
        "That works for me.",
        "Sounds good.",
    ),
    "negate": ("No, that's not right.", "No, I don't want that."),
    "thank_close": (
        "Thank you, that's all I need.",
        "Thanks, bye.",
        "Great, thanks for your help.",
    ),
    "inform": ("At 5 pm on Friday.", "In San Francisco.", "The second one.", "For two people."),
    "follow_up": (
        "What about the other one?",
        "How much does it cost?",
        "What's their address?",
        "And what about that?",
        "Can you tell me more about it?",
    ),
    "ask_attribute": (
        "What is their phone number?",
        "Is it open on Sundays?",
        "Does it include that?",
        "How long does it take?",
    ),
    "complaint": (
        "That's not what I asked.",
        "That's wrong, please try again.",
        "That didn't help.",
    ),
    "greeting": ("Hi, I need some help.", "Hello there."),
}

#: Dialogue-act prototypes for the assistant's replies.
REPLY_ACT_PROTOTYPES: dict[str, tuple[str, ...]] = {
    "offer_more": ("Is there anything else I can help you with?", "Can I help with anything else?"),
    "request_info": (
        "Which city would you like?",
        "What date and time?",
        "Could you give me more details?",
    ),
    "confirm": (
        "Please confirm the following details: is that correct?",
        "Shall I go ahead with this?",
    ),
    "done": (
        "Your reservation is confirmed.",
        "Done, your request has been submitted.",
        "All set.",
    ),
    "inform": ("Here is the information you asked for.", "The address is 123 Main Street."),
    "offer": (
        "I found an option that matches. Would that work?",
        "There are 3 results; the first is available.",
    ),
    "fail": ("Sorry, I couldn't complete that.", "I couldn't find any information about that."),
    "goodbye": ("Have a great day!", "Goodbye."),
}

_STOPWORDS = frozenset(
    "a an the i me my we our you your it its is are was were be been do does did to of in on "
    "at for with and or but if so this that these those there here what whats what's how when "
    "where which who why can could would will should may might please thanks thank just also "
    "any some about from by as up out not no yes ok okay".split()
)
_WORD = re.compile(r"[a-z0-9']+")


@dataclass(frozen=True)
class ActPrototypes:
    """The embedded prototype groups (one matrix per act); build once per embedder."""

    user: tuple[FloatArray, ...]
    reply: tuple[FloatArray, ...]

    @classmethod
    def embed_with(cls, embed: Embed) -> ActPrototypes:
        """Embed every prototype sentence."""
        return cls(
            user=tuple(embed(list(group)) for group in USER_ACT_PROTOTYPES.values()),
            reply=tuple(embed(list(group)) for group in REPLY_ACT_PROTOTYPES.values()),
        )

    def user_scores(self, vectors: FloatArray) -> FloatArray:
        """Per row of ``vectors``, its highest cosine to each user act, shape (n, acts)."""
        return _scores(vectors, self.user)

    def reply_scores(self, vectors: FloatArray) -> FloatArray:
        """Per row of ``vectors``, its highest cosine to each reply act, shape (n, acts)."""
        return _scores(vectors, self.reply)


def _scores(vectors: FloatArray, groups: tuple[FloatArray, ...]) -> FloatArray:
    columns = [np.max(vectors @ group.T, axis=1) for group in groups]
    return np.stack(columns, axis=1).astype(np.float32)


def turn_texts(dialogue: Dialogue) -> tuple[list[str], list[str]]:
    """The user messages and the assistant responses, one each per turn."""
    return (
        [turn.user_msg for turn in dialogue.turns],
        [turn.response for turn in dialogue.turns],
    )


def minutes_since_previous(dialogue: Dialogue) -> list[float | None]:
    """Per turn, minutes since the previous turn's message (None without timestamps)."""
    gaps: list[float | None] = [None]
    for previous, current in zip(dialogue.turns, dialogue.turns[1:], strict=False):
        gaps.append(_gap_minutes(previous.timestamp, current.timestamp))
    return gaps


def _gap_minutes(before: datetime | None, after: datetime | None) -> float | None:
    if before is None or after is None:
        return None
    try:
        return (after - before).total_seconds() / 60.0
    except TypeError:  # one naive, one aware timestamp
        return None


def content_words(text: str) -> set[str]:
    """Lower-cased words of three or more letters that are not stop words."""
    return {w for w in _WORD.findall(text.lower()) if w not in _STOPWORDS and len(w) > 2}
