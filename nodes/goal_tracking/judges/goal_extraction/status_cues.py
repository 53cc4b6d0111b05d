"""Local status cues for the goal tracker: what an utterance does to a goal (paper 000, §5.2).

The local status judge reads the move an utterance makes from its wording:

* **System utterances**: the act read by the model learned from SGD's annotated system acts
  (:mod:`~nodes.goal_tracking.judges.goal_extraction.status_acts`): a reported booking or
  purchase (``success``) completes a transaction, a reported failure (``failure``) fails it, a
  request to confirm the details (``confirm``) leaves it pending on the user, and results
  presented (``results``) complete a lookup.
* **User utterances**: the user's own words, and only explicit ones: "never mind", "forget
  about the hotel", "cancel that" drop a goal (abandoned); "I'll let you know" puts it on hold
  (pending). SGD cannot teach these: its users never turn a transaction down outright (every
  reply to a CONFIRM that the system does not execute changes the details), so the user side
  stays a short list of phrases, and a goal the user merely stops mentioning is left as it is.

:func:`status_cue` returns the cue (status, the act and the words that triggered it) or None;
which goal the cue applies to is decided by
:mod:`~nodes.goal_tracking.judges.goal_extraction.status_focus`.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Literal

from todeval.evals.goal_tracking_schema import GoalStatus
from todeval.nodes.goal_tracking.judges.goal_extraction.status_acts import (
    system_act,
    system_act_model,
)
from todeval.nodes.judges.text import cue

Speaker = Literal["USER", "SYSTEM"]
CueAct = Literal["success", "failure", "confirm", "results", "abandon", "defer"]

#: The least probability of the system-act model for a system cue.
MIN_ACT_PROBABILITY = 0.5

#: The user drops a goal (evidence of abandonment).
USER_ABANDONS = cue(
    r"\b(never ?mind|forget (about )?(it|that|this|the \w+)|cancel (that|it|this|the (request|"
    r"\w+))|don'?t bother|no longer (need|want)|not interested( anymore)?|skip (it|that|the "
    r"\w+)|let'?s drop|drop (it|that|the \w+)|don'?t (need|want) (it|that|the \w+) any ?more)\b|"
    r"\b(no|nah),? (thanks|thank you)[,.]? (i'?ll|i will) (do|handle|sort|figure)\b"
)
#: The user puts the goal on hold (asynchronous: it stays alive, waiting on the user).
USER_DEFERS = cue(
    r"\b(i'?ll|i will|let me) (let you know|get back to you|think about it|check (with|and)|"
    r"decide later|come back)\b|\bnot (right )?now\b|\blater\b[^.?!]{0,20}\b(decide|book|do)\b|"
    r"\bhold (off|on)\b"
)

_SYSTEM_STATUS: dict[str, tuple[CueAct, GoalStatus]] = {
    "success": ("success", "completed"),
    "failure": ("failure", "failed"),
    "confirm": ("confirm", "pending"),
    "results": ("results", "completed"),
}


#: The user agrees to what the system asked them to confirm.
USER_AFFIRMS = cue(
    r"^\W*(yes|yeah|yep|yup|sure|correct|right|exactly|perfect|great|cool|ok(ay)?|fine|"
    r"absolutely|definitely|please do|go ahead|do it|book it|that'?s (right|correct|good|great|"
    r"perfect|fine|it)|that (works|is (right|correct))|sounds (good|great|perfect|right)|"
    r"confirm(ed)?)\b"
)


def user_affirms(utterance: str) -> bool:
    """Whether the user says yes to a confirmation (and not "yes, but change ...")."""
    return bool(USER_AFFIRMS.search(utterance)) and not USER_ABANDONS.search(utterance)


@dataclass(frozen=True)
class StatusCue:
    """A status an utterance signals, the act behind it, and the words that signalled it.

    Attributes:
        status: The status the goal moves to.
        evidence: The words of the utterance that carry the cue.
        act: ``success``/``failure``/``confirm``/``results`` (system) or ``abandon``/``defer``
            (user).
        confidence: The model's probability for a system act; 1.0 for the user's words.
    """

    status: GoalStatus
    evidence: str
    act: CueAct = "success"
    confidence: float = 1.0

    @property
    def for_transactions(self) -> bool:
        """Whether the cue concerns a transaction (book, buy, pay): success, confirm."""
        return self.act in ("success", "confirm")

    @property
    def for_lookups(self) -> bool:
        """Whether the cue concerns a lookup only: results presented."""
        return self.act == "results"


@functools.lru_cache(maxsize=4096)
def system_cue(utterance: str) -> StatusCue | None:
    """The cue of a system utterance (results included), or None."""
    reading = system_act(utterance)
    move = _SYSTEM_STATUS.get(reading.act)
    if move is None or reading.probability < MIN_ACT_PROBABILITY:
        return None
    evidence = system_act_model().evidence(utterance, reading.act)
    return StatusCue(move[1], evidence, move[0], round(reading.probability, 4))


def user_cue(utterance: str) -> StatusCue | None:
    """The cue of a user utterance: explicit abandonment or deferral, or None."""
    checks: tuple[tuple[re.Pattern[str], GoalStatus, CueAct], ...] = (
        (USER_ABANDONS, "abandoned", "abandon"),
        (USER_DEFERS, "pending", "defer"),
    )
    for pattern, status, act in checks:
        found = pattern.search(utterance)
        if found:
            return StatusCue(status, found.group(0), act)
    return None


def status_cue(speaker: Speaker, utterance: str) -> StatusCue | None:
    """The lifecycle move an utterance signals for a goal, if any.

    Results presented by the system are not a move of their own here (they complete a lookup
    only: see :func:`system_cue`); a transaction's success, failure and confirmation are.
    """
    if speaker == "USER":
        return user_cue(utterance)
    found = system_cue(utterance)
    return None if found is None or found.for_lookups else found
