"""Teacher voting subsystem: N teachers label every turn, the majority decides (paper 004, §6).

``assign_teachers`` -> ``label_turns`` once per teacher (``Send``, in parallel) -> ``vote_labels``
-> ``escalate_to_human`` when a turn is ambiguous: the graph pauses with ``interrupt()`` and
resumes with ``Command(resume={"quality": ..., "rcof": ..., "note": ...})``, in the CLI
(``todeval review``) or in LangGraph Studio. See :mod:`nodes.voting` for the voting rules.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, NotRequired, cast

from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from graphs.context import Context
from nodes.voting import (
    assign_teachers,
    escalate_to_human,
    label_turns,
    route_after_vote,
    send_to_teachers,
    vote_labels,
)


class TeacherTurnLabel(TypedDict):
    """One teacher's label for one turn."""

    judge: str
    quality: str | None
    rcof: str | None
    rationale: str


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


class TeacherLabels(TypedDict):
    """Everything one teacher said about a dialogue (``index`` = its place in the teacher list)."""

    index: int
    judge: str
    turns: list[TeacherTurnLabel]


class TeacherTask(TypedDict):
    """What ``Send`` hands one teacher."""

    dialogue: dict[str, Any]
    teacher: str
    index: int


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


def build_teacher_voting_graph() -> StateGraph[Any, Context, Any, Any]:
    """Teachers in parallel, then the vote, then (if needed) the human."""
    builder = StateGraph(
        VotingState,
        context_schema=Context,
        input_schema=VotingInput,
        output_schema=VotingOutput,
    )
    builder.add_node("assign_teachers", assign_teachers)
    # A Send target reads its own input (TeacherTask), not the graph state.
    builder.add_node("label_turns", cast(Any, label_turns), input_schema=TeacherTask)
    builder.add_node("vote_labels", vote_labels)
    builder.add_node("escalate_to_human", escalate_to_human)
    builder.add_edge(START, "assign_teachers")
    builder.add_conditional_edges("assign_teachers", send_to_teachers, ["label_turns"])
    builder.add_edge("label_turns", "vote_labels")
    builder.add_conditional_edges("vote_labels", route_after_vote, ["escalate_to_human", END])
    builder.add_edge("escalate_to_human", END)
    return builder


graph = build_teacher_voting_graph().compile(name="teacher_voting")
