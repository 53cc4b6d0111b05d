"""State of the goal-success graphs (paper 004): segmentation, teacher voting, goal scores.

Kept below ``graphs/`` so the nodes can import their own state types (imports point down).
"""

from __future__ import annotations

import operator
from collections.abc import Mapping
from typing import Annotated, Any, NotRequired

from typing_extensions import TypedDict

from todeval.evals.schema import Dialogue


class TurnSegment(TypedDict):
    """One turn's label."""

    turn_number: int
    is_new_goal: bool | None
    p_new_goal: float | None


class GoalSpan(TypedDict):
    """A goal: turns ``start_turn..end_turn`` (1-based, inclusive)."""

    goal_index: int
    start_turn: int
    end_turn: int


class SegmentationInput(TypedDict):
    """A dialogue record: ``dialog_id`` and ``turns[{turn_number, user_msg, response, ...}]``."""

    dialogue: dict[str, Any]


class SegmentationOutput(TypedDict):
    """The labels and goal spans of one dialogue."""

    dialogue_id: str
    turns: list[TurnSegment]
    goals: list[GoalSpan]
    judge: str
    reason: NotRequired[str | None]
    voted_by: NotRequired[list[str]]
    """The panel that voted the boundaries (the segmenter and the teachers that segment)."""


class SegmentationState(SegmentationInput, SegmentationOutput, total=False):
    """Everything the graph's nodes read and write."""


class TeacherTurnLabel(TypedDict):
    """One teacher's label for one turn."""

    judge: str
    quality: str | None
    rcof: str | None
    rationale: str
    is_new_goal: NotRequired[bool | None]
    """The teacher's own segmentation of the turn (LLM teachers: paper 004's single call)."""


class VotedTurn(TypedDict):
    """The final labels of one turn, with every teacher's label and how it was decided."""

    turn_number: int
    quality: str | None
    rcof: str | None
    ambiguous: bool
    ambiguous_fields: list[str]
    decided_by: str | None
    teachers: list[TeacherTurnLabel]
    human: NotRequired[dict[str, Any]]
    lone_label: NotRequired[dict[str, Any]]
    """The one teacher that could judge, when the others abstained (the turn is undecided)."""
    undecided_reason: NotRequired[str]
    """Why the turn has no quality (no teacher could judge, or only one could)."""
    certain_evidence: NotRequired[str]
    """The evidence that decided the turn by itself (an empty reply, a logged error)."""
    tool_evidence: NotRequired[str]
    """The tool evidence that decided the turn a success (a grounded call served it)."""


class TeacherLabels(TypedDict):
    """Everything one teacher said about a dialogue (``index`` = its place in the teacher list)."""

    index: int
    judge: str
    turns: list[TeacherTurnLabel]


class PanelSeat(TypedDict):
    """One teacher of the panel: its place in ``Context.teachers`` and its spec."""

    index: int
    teacher: str


class TeacherTask(TypedDict):
    """What ``Send`` hands one labelling task: the dialogue and the teachers that label it."""

    dialogue: dict[str, Any]
    teachers: list[PanelSeat]


class VotingInput(TypedDict):
    """A dialogue record: ``dialog_id`` and ``turns[{turn_number, user_msg, response, ...}]``."""

    dialogue: dict[str, Any]


class VotingOutput(TypedDict):
    """The voted labels of every turn, the teachers asked, and the human verdicts given."""

    dialogue_id: str
    teachers: list[str]
    turns: list[VotedTurn]
    human_verdicts: list[dict[str, Any]]


class VotingState(VotingInput, VotingOutput, total=False):
    """Everything the graph's nodes read and write."""

    labels: Annotated[list[TeacherLabels], operator.add]


class GoalScore(TypedDict):
    """One goal's outcome (see :func:`evals.metrics.goal_success.success_rate.score_goals`)."""

    goal_index: int
    start_turn: int
    end_turn: int
    n_turns: int
    success: bool | None
    rcof: str | None
    fractional_credit: float | None
    last_turn_success: bool | None
    turns: list[VotedTurn]


class GoalSuccessInput(TypedDict):
    """A dialogue record: ``dialog_id`` and ``turns[{turn_number, user_msg, response, ...}]``."""

    dialogue: dict[str, Any]


class GoalSuccessOutput(TypedDict):
    """Goals with their success and root cause, the voted turns and who judged."""

    dialogue_id: str
    segmentation: SegmentationOutput
    turns: list[VotedTurn]
    teachers: list[str]
    human_verdicts: list[dict[str, Any]]
    goals: list[GoalScore]


class GoalSuccessState(GoalSuccessInput, GoalSuccessOutput, total=False):
    """Everything the graph's nodes read and write."""


#: The last dialogue record read and its model (one tuple, swapped whole): goal success's steps
#: read the same record object one after the other (segmentation, the teachers, the vote).
_last_read: tuple[Mapping[str, Any], Dialogue] | None = None


def read_dialogue(record: Mapping[str, Any]) -> Dialogue:
    """``Dialogue.model_validate(record)``, validated once for steps that read the same object.

    A state's values are not changed in place (a step returns new ones), so the record object
    the last step read is the same dialogue: its model is handed out again, not validated
    again (three validations a dialogue were about one per cent of a local run). The model
    is only read by the steps. Holds one record at a time.
    """
    global _last_read
    last = _last_read  # one read: another thread may swap it, never mutate it
    if last is not None and last[0] is record:
        return last[1]
    dialogue = Dialogue.model_validate(record)
    _last_read = (record, dialogue)
    return dialogue
