"""What a teacher says about each turn: ``quality``, ``rcof`` and a rationale (paper 004, §4.2-4.3).

Every teacher (LLM or local) implements :class:`TurnQualityTeacher`. A teacher that cannot
judge a turn says so with ``quality=None`` and a rationale saying why; the vote is then over
the teachers that could (:mod:`nodes.goal_success.voting`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from todeval.evals.schema import Dialogue, Quality

ROLE = "turn_quality"
"""The judge role every teacher fills."""


@dataclass(frozen=True)
class TurnLabel:
    """One teacher's label for one turn.

    Attributes:
        turn_number: The turn (1-based).
        quality: ``success``/``failure``, or None when the teacher could not judge the turn.
        rcof: A canonical root-cause code (``E1``..``E7``, see ``evals.schema.RCOF_CODES``) when
            ``quality`` is ``failure`` and the teacher can tell why; None otherwise.
        rationale: A short human-readable reason for the label (or for abstaining).
        is_new_goal: The teacher's segmentation of the turn, when it gives one (LLM teachers
            answer paper 004's single call; local teachers leave it to the segmenter).
    """

    turn_number: int
    quality: Quality | None
    rcof: str | None
    rationale: str
    is_new_goal: bool | None = None


@dataclass(frozen=True)
class TeacherVerdict:
    """One teacher's labels for a whole dialogue, one per turn in order."""

    judge: str
    turns: list[TurnLabel]
    reason: str | None = None
    """Why the teacher could not judge the dialogue at all (then every turn is None)."""


class TurnQualityTeacher(Protocol):
    """Anything that labels every turn of a dialogue with quality and root cause."""

    name: str

    def prepare(self, dialogues: Sequence[Dialogue]) -> None:
        """Batch work for dialogues about to be labelled (may do nothing)."""
        ...

    def label(
        self, dialogue: Dialogue, *, routes: Mapping[str, str] | None = None
    ) -> TeacherVerdict:
        """Label each turn of ``dialogue``.

        Args:
            dialogue: The dialogue.
            routes: The deployment's route table (route -> what it handles), for teachers that
                check routing (E6); others ignore it.
        """
        ...


def abstain(dialogue: Dialogue, judge: str, reason: str) -> TeacherVerdict:
    """A verdict that judges no turn, with the reason on every turn and on the verdict."""
    return TeacherVerdict(
        judge=judge,
        turns=[TurnLabel(turn.turn_number, None, None, reason) for turn in dialogue.turns],
        reason=reason,
    )
