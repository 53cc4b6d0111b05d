"""Features for local goal segmentation, from the signals paper 004 (Section 4.1) names.

For each turn j >= 2 the question is whether the user's message starts a new information need.
The signals: lexical cues ("another question", "also"), whether the user is answering the
assistant's question ("yes", "the ThinkPad"), topic change between consecutive user turns (MiniLM
cosine), how the assistant's previous reply ended ("anything else?"), and time gaps. Everything
here is text-only, so it applies to any domain; time gaps are applied by the judge as a shift of
the odds because SGD, the training data, has no timestamps.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import datetime

import numpy as np
from numpy.typing import NDArray

from evals.schema import Dialogue

FloatArray = NDArray[np.float32]
Embed = Callable[[Sequence[str]], FloatArray]


def _cue(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


#: Cues in the user's message.
USER_CUES: dict[str, re.Pattern[str]] = {
    "explicit_switch": _cue(
        r"\b(another|one more|different|separate|new|unrelated|other) (question|thing|topic|"
        r"request|issue|query|matter)\b|\bby the way\b|\bbtw\b|\bon a different note\b|"
        r"\bunrelated\b|\bswitching (gears|topics?)\b|\bsomething else\b|\balso\b|\banother\b"
    ),
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

N_SCALAR_FEATURES = len(USER_CUES) + len(PREVIOUS_REPLY_CUES) + 9


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


def segmentation_features(dialogue: Dialogue, embed: Embed) -> FloatArray:
    """Feature rows for turns 2..N (shape ``(N-1, 5*dim + N_SCALAR_FEATURES)``).

    Vectors: the user message u_j, the previous user message u_{j-1}, the assistant reply
    just before u_j (r_{j-1}), the reply to u_j (r_j) and u_j * u_{j-1}; then the cosine
    similarities between them and the cue flags.
    """
    users, replies = turn_texts(dialogue)
    n = len(users)
    if n < 2:
        return np.zeros((0, 0), np.float32)
    vectors = embed(users + replies)
    user_vecs, reply_vecs = vectors[:n], vectors[n:]
    # An empty reply (a system error) must not look like any text: zero vector.
    empty = np.array([not text.strip() for text in replies])
    reply_vecs = np.where(empty[:, None], 0.0, reply_vecs).astype(np.float32)
    rows = [
        _turn_row(j, users, replies, user_vecs, reply_vecs) for j in range(1, n)
    ]
    return np.stack(rows).astype(np.float32)


def _turn_row(
    j: int,
    users: list[str],
    replies: list[str],
    user_vecs: FloatArray,
    reply_vecs: FloatArray,
) -> FloatArray:
    u, u_prev = user_vecs[j], user_vecs[j - 1]
    r_prev, r = reply_vecs[j - 1], reply_vecs[j]
    earlier_max = float(np.max(user_vecs[:j] @ u))
    scalars = [
        float(u @ u_prev),
        float(u @ r_prev),
        float(r @ r_prev),
        float(u @ r),
        earlier_max,
        np.log1p(len(users[j].split())),
        np.log1p(len(users[j - 1].split())),
        float("?" in users[j]),
        float(not replies[j - 1].strip()),
    ]
    scalars += [float(bool(p.search(users[j]))) for p in USER_CUES.values()]
    scalars += [float(bool(p.search(replies[j - 1]))) for p in PREVIOUS_REPLY_CUES.values()]
    return np.concatenate([u, u_prev, r_prev, r, u * u_prev, np.asarray(scalars, np.float32)])
