"""The teacher role, ``turn_quality``: ``quality``, ``rcof`` and a rationale per turn (paper 004).

Every teacher implements :class:`TurnQualityTeacher`; one that cannot judge a turn says so with
``quality=None`` and a rationale, and the vote is over the teachers that could
(:mod:`nodes.goal_success.voting`). Local teachers: ``local:response`` (= ``local``),
``local:signals`` and ``local:semantic`` read different evidence (the response, the user's
reaction, answer-question fit); ``local:turn``, ``local:reply-reaction`` and
``local:fit-reaction`` are learned (:mod:`.learned`). ``<provider>:<model>``
(:class:`LLMTeacher`) is the paper's Appendix D call, which also answers ``is_new_goal`` (the
teachers vote on goal boundaries too) and serves an LLM segmenter of the same spec from the
response cache.

**Certain evidence** (:func:`certain_failure`) decides a turn by itself, whatever teachers say:
only what the log states, never a reading of the text - an empty reply, an error or a timeout
recorded in ``turn.metadata`` (``error``, ``timeout``, ``timed_out``), or a tool action whose
status is an error. Each is a System Error (E5, paper 004 Appendix B). A slow reply, a "nothing
found" lookup or an error-like text is evidence for a teacher to weigh, not certain.
:func:`certain_failures` adds what the transcript states across turns (:mod:`.tool_evidence`):
a reply that only echoes the user, and on transcripts with a tool channel a hand-over with
nothing done and an action claimed without a successful tool call (hallucinated success).
:func:`~.tool_evidence.served_turns` is the other side on tool transcripts: a grounded tool
call that came back with a result, with no complaint after it, decides the turn a success
when no certain failure does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from todeval.evals.schema import Dialogue, Quality, Turn
from todeval.nodes.goal_success.judges.appendix_d import AppendixDRoleJudge
from todeval.nodes.goal_success.judges.turn_quality.tool_evidence import tool_evidence_failures

CARDS = Path(__file__).parent / "validity.json"
"""The local teachers' validity cards (``make validity``)."""


@dataclass(frozen=True)
class TurnLabel:
    """One teacher's label for one turn (1-based ``turn_number``).

    ``quality`` is None when the teacher could not judge; ``rcof`` is a canonical root-cause code
    (``evals.schema.RCOF_CODES``) for a failure whose cause the teacher can tell; ``is_new_goal``
    is given by LLM teachers (paper 004's single call), left to the segmenter by local ones.
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


def certain_failures(dialogue: Dialogue) -> list[tuple[str, str] | None]:
    """Per turn, :func:`certain_failure` or else the transcript's tool evidence of a failure."""
    return [
        certain_failure(turn) or evidence
        for turn, evidence in zip(dialogue.turns, tool_evidence_failures(dialogue), strict=True)
    ]


def _actions(value: object) -> list[Mapping[str, Any]]:
    if isinstance(value, Mapping):
        return [value]
    if isinstance(value, list):
        return [item for item in value if isinstance(item, Mapping)]
    return []
