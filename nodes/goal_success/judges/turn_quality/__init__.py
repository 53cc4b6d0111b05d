"""The teacher role, ``turn_quality``: ``quality``, ``rcof`` and a rationale per turn (paper 004).

Every teacher (LLM or local) implements :class:`TurnQualityTeacher`. A teacher that cannot
judge a turn says so with ``quality=None`` and a rationale saying why; the vote is then over
the teachers that could (:mod:`nodes.goal_success.voting`). The teachers:

* ``local:response`` (= ``local``), ``local:signals``, ``local:semantic`` - three local teachers
  that read different evidence (the response itself, the user's reactions, answer-question fit);
  see their modules.
* ``local:turn``, ``local:reply-reaction``, ``local:fit-reaction`` - three learned teachers, each
  reading two of the reply, its fit to the request and the user's reaction (:mod:`.learned`);
  the model files are beside this module.
* ``<provider>:<model>`` (:class:`LLMTeacher`) - the paper's Appendix D call (canonical RCOF
  codes, :mod:`nodes.goal_success.judges.appendix_d`); given the domain's business rules
  (``Context.teacher_sop``) it reads them in the prompt, as the paper's teachers share the
  experts' SOP. The same call answers ``is_new_goal`` (kept on each label: the teachers vote on
  goal boundaries too) and serves an LLM segmenter with the same spec from the response cache.

**Certain evidence** (:func:`certain_failure`) decides a turn by itself, whatever teachers say:
only what the log states, never a reading of the text - an empty reply, an error or a timeout
recorded in ``turn.metadata`` (``error``, ``timeout``, ``timed_out``), or a tool action whose
status is an error (``metadata.action``, one action or a list of them). Each is a System Error
(E5, paper 004 Appendix B). A slow reply, a "nothing found" lookup or a reply that reads like an
error message is evidence for a teacher to weigh, not certain: those stay with the teachers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from todeval.evals.schema import Dialogue, Quality, Turn
from todeval.nodes.goal_success.judges.appendix_d import AppendixDRoleJudge

CARDS = Path(__file__).parent / "validity.json"
"""The local teachers' validity cards (``make validity``)."""


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
        """Label each turn of ``dialogue`` (``routes``: route -> what it handles, for E6 checks)."""
        ...


def abstain(dialogue: Dialogue, judge: str, reason: str) -> TeacherVerdict:
    """A verdict that judges no turn, with the reason on every turn and on the verdict."""
    return TeacherVerdict(
        judge=judge,
        turns=[TurnLabel(turn.turn_number, None, None, reason) for turn in dialogue.turns],
        reason=reason,
    )


class LLMTeacher(AppendixDRoleJudge):
    """An LLM reads the whole dialogue and labels every turn (Appendix D prompt)."""

    def label(
        self, dialogue: Dialogue, *, routes: Mapping[str, str] | None = None
    ) -> TeacherVerdict:
        """One call per dialogue (or window); a turn the model leaves out is not judged."""
        verdict = self.call.judge(dialogue)
        if all(turn is None for turn in verdict.turns):
            return abstain(dialogue, self.name, verdict.reason or "the judge gave no answer")
        labels = []
        for turn, said in zip(dialogue.turns, verdict.turns, strict=True):
            if said is None or said.quality is None:
                why = f"not judged: {verdict.reason or 'the judge gave no quality'}"
                labels.append(TurnLabel(turn.turn_number, None, None, why))
            else:
                labels.append(
                    TurnLabel(
                        turn.turn_number,
                        said.quality,
                        said.rcof,
                        said.rationale.strip(),
                        said.is_new_goal,
                    )
                )
        return TeacherVerdict(self.name, labels)


SYSTEM_ERROR = "E5"
"""The root cause of every certain failure."""

ACTION_ERRORS = frozenset({"error", "failed", "failure", "timeout", "timed_out", "exception"})
"""Tool-action statuses that mean the action failed."""

_TIMEOUT_KEYS = ("timeout", "timed_out")


def certain_failure(turn: Turn) -> tuple[str, str] | None:
    """``("E5", reason)`` when ``turn`` carries certain evidence of a failure, else None.

    Certain: an empty reply, ``metadata.error``, a timeout flag, or a tool action with an error
    status.
    """
    meta: Mapping[str, Any] = turn.metadata
    if not turn.response.strip():
        return SYSTEM_ERROR, "certain evidence: empty reply"
    if meta.get("error"):
        return SYSTEM_ERROR, f"certain evidence: metadata.error = {meta['error']!r}"
    for key in _TIMEOUT_KEYS:
        if meta.get(key):
            return SYSTEM_ERROR, f"certain evidence: metadata.{key} = {meta[key]!r}"
    for action in _actions(meta.get("action")):
        status = str(action.get("status", "")).strip().lower()
        if status in ACTION_ERRORS:
            tool = action.get("tool", "?")
            return SYSTEM_ERROR, f"certain evidence: tool action {tool} returned status {status!r}"
    return None


def _actions(value: object) -> list[Mapping[str, Any]]:
    if isinstance(value, Mapping):
        return [value]
    if isinstance(value, list):
        return [item for item in value if isinstance(item, Mapping)]
    return []
