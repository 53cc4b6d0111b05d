"""Local status cues for the goal tracker: dialogue acts read off the text (paper 000, §5.2).

The local status judge reads what an utterance *does* to a goal from its wording: a system
reply that reports a booking completes it, an apology for not managing fails it, a request for
confirmation leaves it pending on the user; a user who says "never mind" abandons it, and "I'll
let you know" puts it on hold. :func:`status_cue` returns the cue (status and the words that
triggered it) or None; which goal the cue applies to is the tracker's business.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from evals.goal_tracking_schema import GoalStatus
from nodes.judges.text import cue

Speaker = Literal["USER", "SYSTEM"]


#: The system reports the task done (SGD's NOTIFY_SUCCESS in words).
SYSTEM_DONE = cue(
    r"\b(is|are|has been|have been|was|were|got)\s+(successfully\s+)?(booked|reserved|"
    r"confirmed|scheduled|placed|submitted|set( up)?|made|added|transferred|sent|purchased|"
    r"cancell?ed|created|completed|processed|successful)\b|\bsuccessfully\b|"
    r"\b(i|we)(?: have|'ve)? (booked|reserved|made|placed|scheduled|purchased|bought|sent|"
    r"transferred|added|set up|played|started)\b|\bi was able to\b|\ball set\b|"
    r"\b(booking|reservation|purchase|payment|transfer) (is )?(confirmed|done|complete)\b|"
    r"\b(has|have) started( playing)?\b|\bis (now )?playing\b|\b(will|is about to) "
    r"(start|play)\b|\bstarting (the|your)\b"
)
#: The system reports it could not do the task (NOTIFY_FAILURE in words).
SYSTEM_FAILED = cue(
    r"\b(sorry|unfortunately|i apologi[sz]e|my apologies|apologies|regretfully)\b[^.?!]{0,80}"
    r"\b(couldn'?t|could not|can'?t|cannot|unable|failed|wasn'?t able|was not able|not "
    r"available|unavailable|unsuccessful|not successful|no (availability|seats|tables|rooms|"
    r"slots|other)|fully booked|did not go through|didn'?t go through|doesn'?t work)\b|"
    r"\b(booking|reservation|transaction|transfer|payment|request|purchase) (failed|was "
    r"declined|was unsuccessful|was not successful|did not go through|didn'?t go through)\b|"
    r"\b(i am|i'm|i was) (unable|not able) to\b|\bhas failed\b|\bi can'?t (make|book|"
    r"reserve|buy|purchase|complete)\b"
)
#: The system asks the user to confirm or choose before acting: waiting on the user.
SYSTEM_AWAITS_CONFIRMATION = cue(
    r"\bplease confirm\b|\bconfirm(ing)?:|\blet me confirm\b|\bto confirm\b|"
    r"\bcan you confirm\b|\bconfirmation details\b|\bconfirm (the|some|these|your) "
    r"(details|information|following)\b|\bjust to (make sure|double check|confirm)\b|"
    r"\bdouble[- ]check\b|\b(shall|should) i (go ahead|book|reserve|proceed|make|place|"
    r"schedule|buy|play|set|add|transfer|send|cast)\b|\b(do|would) you (want|like) me to "
    r"(book|reserve|proceed|make|place|schedule|buy)\b|\bis (that|this|everything) "
    r"(right|correct|ok|okay)\b|\bso you'?d like\b|\byou (would|'d) like\b[^.!]*\?"
)
#: The user drops the goal.
USER_ABANDONS = cue(
    r"\b(never ?mind|forget (it|about it|that)|cancel (that|it|the request)|don'?t bother|"
    r"no longer need|not interested( anymore)?|skip (it|that)|let'?s drop)\b|"
    r"\b(no|nah),? (thanks|thank you)[,.]? (i'?ll|i will) (do|handle|sort|figure)\b"
)
#: The user puts the goal on hold (asynchronous: it stays alive, waiting on the user).
USER_DEFERS = cue(
    r"\b(i'?ll|i will|let me) (let you know|get back to you|think about it|check (with|and)|"
    r"decide later|come back)\b|\bnot (right )?now\b|\blater\b[^.?!]{0,20}\b(decide|book|do)\b|"
    r"\bhold (off|on)\b"
)


@dataclass(frozen=True)
class StatusCue:
    """A status an utterance signals, and the words that signalled it."""

    status: GoalStatus
    evidence: str


def status_cue(speaker: Speaker, utterance: str) -> StatusCue | None:
    """The lifecycle move an utterance signals, if any (failure is checked before success)."""
    checks: tuple[tuple[re.Pattern[str], GoalStatus], ...] = (
        (
            (SYSTEM_FAILED, "failed"),
            (SYSTEM_DONE, "completed"),
            (SYSTEM_AWAITS_CONFIRMATION, "pending"),
        )
        if speaker == "SYSTEM"
        else ((USER_ABANDONS, "abandoned"), (USER_DEFERS, "pending"))
    )
    for pattern, status in checks:
        found = pattern.search(utterance)
        if found:
            return StatusCue(status, found.group(0))
    return None
