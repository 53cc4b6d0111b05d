"""``local:signals``: turn quality from the user's reaction to a response (paper 004, App. A).

Evidence read, for turn *k*: the explicit feedback logged on turn *k*
(``metadata["feedback"]``: thumbs, likes, ratings) and the user's next message (turn *k+1*),
plus, as a repair cue, whether the assistant's next reply concedes a mistake. Never the
response's content: that is what ``local:response`` and ``local:semantic`` read.

Rules, first match wins:

1. Thumbs-down (or any negative rating) on turn *k* -> failure; thumbs-up -> success.
2. No next message and no feedback -> ``None`` (no signal: the last turn says nothing).
3. The next message gives up or takes the need elsewhere ("never mind", "forget it", "I'll
   just google it", "I'll ask someone else") -> failure. Going where the response itself
   pointed ("I'll ask HR" after "ask HR") is compliance, not abandonment.
4. Explicit negative feedback or doubt ("that's wrong", "not what I asked", "are you sure?",
   "??", "ugh", "try again"), or a complaint that names what went wrong ("it got cut off",
   "wrong department") -> failure.
5. A correction ("no, I meant ...", "not X, Y", "I said ...") -> failure. A bare "no, ..." that
   answers a question the response asked is an answer, not a correction.
6. A rephrase: the next message is as close to the previous question as only 2% of SGD dev's
   same-goal consecutive user messages are (MiniLM cosine >= ``REPHRASE_MIN``), and it is not
   an announced topic switch, an acknowledgement or a request for other options -> failure.
7. The assistant's next reply concedes an error ("you're right", "sorry for the confusion",
   "I misunderstood") -> failure: a repair the user prompted.
8. Thanks, praise, "that worked" -> success.
9. Otherwise the user answered the assistant's question, moved on to a new request or
   continued with a follow-up, without complaint -> success, said to be the weaker evidence.

A failure gets a root cause only when the complaint says why (``COMPLAINT_CAUSES``: "cut off"
-> E5, "wrong department" -> E6, "the page you linked says" -> E3, "why not?" after a refusal
-> E2, "you misunderstood" / "I meant" -> E1); otherwise ``rcof`` is None.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from todeval.evals.schema import Dialogue, Turn
from todeval.nodes.goal_success.judges.response_cues import CONCESSION
from todeval.nodes.goal_success.judges.turn_quality import TeacherVerdict, TurnLabel
from todeval.nodes.goal_success.judges.user_cues import (
    ABANDONMENT,
    ALTERNATIVES,
    COMPLAINT_CAUSES,
    CORRECTION,
    EXPLICIT_CORRECTION,
    EXPLICIT_SWITCH,
    NEGATIVE_FEEDBACK,
    POSITIVE_FEEDBACK,
    USER_CUES,
    content_words,
    feedback_polarity,
    is_acknowledgement,
)
from todeval.nodes.judges.text import WORD, sentences
from todeval.nodes.judges.vectors import Embed, VectorTable

#: Cosine of two consecutive user messages above which the second re-asks the first.
#: 98th percentile of MiniLM cosine over SGD dev's same-goal consecutive user messages, after
#: the exclusions of :func:`can_rephrase` (14,133 pairs; median 0.24, 95th 0.61, 99th 0.75):
#: ``scripts/calibrate_semantic_teacher.py``.
REPHRASE_MIN = 0.69

#: The abandonment phrases that name somewhere else to go (checked against the response).
_GOING_ELSEWHERE = re.compile(r"\bi(?:'| wi)?ll\b", re.IGNORECASE)
#: A bare "no"/"not" opening: a correction only when the response asked nothing.
_BARE_NO = re.compile(r"^\s*(no|nope|nah|not)\b", re.IGNORECASE)


class SignalTeacher:
    """Labels turn *k* from the user's explicit feedback and next message (see module doc)."""

    name = "local:signals"

    def __init__(self, embed: Embed | None = None) -> None:
        """Use ``embed`` for the rephrase check (default: MiniLM, loaded on first use)."""
        self.vectors = VectorTable(embed)

    def prepare(self, dialogues: Sequence[Dialogue]) -> None:
        """Embed the chunk's user messages (the only texts this teacher compares) at once."""
        self.vectors.load(turn.user_msg for d in dialogues for turn in d.turns)

    def label(
        self, dialogue: Dialogue, *, routes: Mapping[str, str] | None = None
    ) -> TeacherVerdict:
        """One label per turn, in order."""
        turns = dialogue.turns
        users = [turn.user_msg for turn in turns]
        vectors = self.vectors.get(users) if len(turns) > 1 else None
        labels = []
        for i, turn in enumerate(turns):
            similarity = None
            if vectors is not None and i + 1 < len(turns):
                similarity = float(vectors[i] @ vectors[i + 1])
            nxt = turns[i + 1] if i + 1 < len(turns) else None
            labels.append(self._label_turn(turn, nxt, similarity))
        return TeacherVerdict(judge=self.name, turns=labels)

    def _label_turn(self, turn: Turn, nxt: Turn | None, similarity: float | None) -> TurnLabel:
        k = turn.turn_number
        polarity = feedback_polarity(turn.metadata)
        if polarity == "negative":
            cause = _complaint_cause(nxt.user_msg) if nxt is not None else None
            return TurnLabel(k, "failure", cause, f"thumbs-down on turn {k}")
        if polarity == "positive":
            return TurnLabel(k, "success", None, f"thumbs-up on turn {k}")
        if nxt is None:
            return TurnLabel(k, None, None, "last turn and no explicit feedback: no user signal")
        return _reaction(turn, nxt, similarity)


def _reaction(turn: Turn, nxt: Turn, similarity: float | None) -> TurnLabel:
    """What the user's next message (turn k+1) says about turn k."""
    failed = _failed_reaction(turn, nxt, similarity)
    if failed is not None:
        return failed
    k, message = turn.turn_number, nxt.user_msg
    if POSITIVE_FEEDBACK.search(message):
        return TurnLabel(
            k, "success", None, f"positive feedback in turn {k + 1}: {_quote(message)}"
        )
    if "?" in turn.response:
        why = "user answered the assistant's question"
    elif EXPLICIT_SWITCH.search(message) or USER_CUES["request"].search(message):
        why = "user moved on to a new request"
    else:
        why = "user continued the conversation"
    return TurnLabel(k, "success", None, f"{why} in turn {k + 1} without complaint (weak evidence)")


def _failed_reaction(turn: Turn, nxt: Turn, similarity: float | None) -> TurnLabel | None:
    """Rules 3-7: the failure turn k+1 shows (the user's message or the next reply), if any.

    Apart from :func:`_reaction`, so that :func:`complaints` does not read the success cues.
    """
    k, message = turn.turn_number, nxt.user_msg
    cause = _complaint_cause(message)
    asked = "?" in turn.response  # the response asked something: "no" may answer it

    gave_up = ABANDONMENT.search(message)
    if gave_up and not _follows_advice(message, gave_up, turn.response):
        return TurnLabel(k, "failure", cause, f"user gave up in turn {k + 1}: {_quote(message)}")
    if NEGATIVE_FEEDBACK.search(message) or cause is not None:
        return TurnLabel(
            k, "failure", cause, f"negative feedback in turn {k + 1}: {_quote(message)}"
        )
    bare_no = _BARE_NO.search(message) and not EXPLICIT_CORRECTION.search(message)
    if CORRECTION.search(message) and not (asked and bare_no):
        return TurnLabel(
            k,
            "failure",
            cause,
            f"user corrected the assistant in turn {k + 1}: {_quote(message)}",
        )
    if similarity is not None and similarity >= REPHRASE_MIN and can_rephrase(message):
        return TurnLabel(
            k,
            "failure",
            cause,
            f"user rephrased the question in turn {k + 1} (cosine {similarity:.2f})",
        )
    conceded = CONCESSION.search(nxt.response)
    if conceded and not EXPLICIT_SWITCH.search(message):
        return TurnLabel(
            k,
            "failure",
            cause,
            f"the assistant conceded an error in turn {k + 1} ('{conceded.group(0)}')",
        )
    return None


REPEAT_MIN_WORDS = 4
"""A repeated sentence this long is the request again, not a courtesy ("yes, please")."""


def complaints(dialogue: Dialogue) -> list[bool]:
    """Per turn, True when the user's explicit signals say it failed (rules 1, 3-5 and 7).

    A thumbs-down on the turn, or a next message that gives up, gives negative feedback,
    corrects the assistant or says a sentence of the request again word for word (:func:`repeats`:
    the request was not served), or a next reply that concedes an error. No embedding is read:
    the rephrase rule (6) is left to its word-for-word form, and a reply the user only answered
    or moved on from is not a complaint. What the judges of a tool transcript read of the
    user's reaction (:mod:`~nodes.goal_success.judges.turn_quality.tool_evidence`).
    """
    turns = dialogue.turns
    # Each user message split into sentences once: it is read as the request of its turn and
    # as the reaction to the turn before.
    spoken = [_sentence_words(turn.user_msg) for turn in turns]
    out = []
    for i, turn in enumerate(turns):
        polarity = feedback_polarity(turn.metadata)
        if polarity is not None or i + 1 == len(turns):
            out.append(polarity == "negative")
            continue
        out.append(
            _says_again(spoken[i + 1], spoken[i])
            or _failed_reaction(turn, turns[i + 1], None) is not None
        )
    return out


def repeats(message: str, request: str) -> bool:
    """True when ``message`` says a sentence of ``request`` again, word for word.

    Only sentences of at least :data:`REPEAT_MIN_WORDS` words that are not acknowledgements
    count.
    """
    return _says_again(_sentence_words(message), _sentence_words(request))


def _sentence_words(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """The sentences of ``text``, each with its lower-cased words."""
    return [(sentence, tuple(WORD.findall(sentence.lower()))) for sentence in sentences(text)]


def _says_again(
    message: Sequence[tuple[str, tuple[str, ...]]], request: Sequence[tuple[str, tuple[str, ...]]]
) -> bool:
    """:func:`repeats` over the :func:`_sentence_words` of the message and the request."""
    said = {
        words
        for sentence, words in request
        if len(words) >= REPEAT_MIN_WORDS and not is_acknowledgement(sentence)
    }
    return any(words in said for _, words in message)


def _complaint_cause(message: str) -> str | None:
    """The root cause a complaint names, if it names one."""
    for code, pattern in COMPLAINT_CAUSES.items():
        if pattern.search(message):
            return code
    return None


def _follows_advice(message: str, gave_up: re.Match[str], response: str) -> bool:
    """True when "I'll ask/call X" goes to an X the response itself pointed to."""
    if not _GOING_ELSEWHERE.match(message, gave_up.start()):
        return False
    return bool(content_words(message[gave_up.end() :]) & content_words(response))


def can_rephrase(message: str) -> bool:
    """False for messages that are close to the last one for other reasons."""
    return not (
        is_acknowledgement(message)
        or EXPLICIT_SWITCH.search(message)
        or ALTERNATIVES.search(message)
        or not content_words(message)
    )


def _quote(message: str, limit: int = 60) -> str:
    text = " ".join(message.split())
    return f"'{text[:limit]}…'" if len(text) > limit else f"'{text}'"
