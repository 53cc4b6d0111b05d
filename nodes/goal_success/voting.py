"""Nodes of the teacher-voting graph: teachers label, the majority decides, a human breaks ties.

Paper 004, Section 6: "If two or more teacher models agree on a label, we accept the annotation
as ground truth. In cases where all three models disagree, we mark [it] as ambiguous and
escalate to human annotators." Per turn and per field:

* ``quality``: a label given by at least two of the teachers that could judge the turn, and by a
  strict majority of them, wins (``decided_by="vote"``). Teachers that could judge but disagree
  with no such majority (one success, one failure, the third abstaining) make the turn
  ambiguous. A lone teacher's label (the others abstained) is *undecided*: kept on the turn as
  ``lone_label`` and not counted, as the paper accepts only what two teachers agree on
  (``decided_by="undecided"``, with ``undecided_reason``). With a single configured teacher its
  label stands (``decided_by="single_teacher"``): there is nobody to agree with.
* Certain evidence decides by itself: an empty reply, an error or timeout in the log's metadata,
  a tool action that failed, is a failure E5 whatever the teachers say
  (``decided_by="certain_evidence"``); so are a reply that only echoes the user (E1), and on a
  transcript with a tool channel a hand-over with nothing done (E2) and a claimed action with
  no successful tool call behind it (hallucinated success, E3).
* On a tool transcript, tool evidence decides a turn a success when no certain evidence of a
  failure does: a tool call serving the request (grounded in the dialogue, not a hand-over)
  came back with a result, the reply is not a hand-over, and the user's next message does not
  complain (``decided_by="tool_evidence"``, :func:`~nodes.goal_success.judges.turn_quality.
  tool_evidence.served_turns`).
* ``rcof`` is voted, for a failed turn, over the teachers that said failure and named a code:
  one code stands, a strict majority wins, otherwise (e.g. E3 vs E4) the cause is ambiguous.

An ambiguous turn pauses the graph with ``interrupt()`` carrying the excerpt and every
teacher's label and rationale; ``Command(resume={"quality": ..., "rcof": ..., "note": ...})``
records the human verdict (``decided_by="human"``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from langgraph.runtime import Runtime
from langgraph.types import Send, interrupt
from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator

from todeval.evals.schema import RCOF_CODES, Dialogue, Quality, Rcof, normalise_rcof
from todeval.nodes.context import Context, get_context
from todeval.nodes.goal_success.judges.turn_quality import certain_failures
from todeval.nodes.goal_success.judges.turn_quality.local_signals import complaints
from todeval.nodes.goal_success.judges.turn_quality.tool_evidence import (
    has_tool_channel,
    served_turns,
)
from todeval.nodes.goal_success.roles import teacher
from todeval.nodes.goal_success.settings import GoalSuccessSettings
from todeval.nodes.goal_success.state import TeacherTask, VotingState, read_dialogue
from todeval.nodes.judges.spec import parse_spec
from todeval.nodes.judges.text import to_the_user

ESCALATION_KIND = "turn_quality_escalation"
"""``kind`` of every interrupt this graph raises (lets reviewers tell them from others)."""

EXCERPT_RADIUS = 1
"""Turns shown before and after the ambiguous one."""


class HumanVerdict(BaseModel):
    """What a reviewer answers to an escalation (``Command(resume=...)``)."""

    quality: Quality = Field(description="success or failure.")
    rcof: Rcof | None = Field(default=None, description="E1-E7 for a failure, else null.")
    note: str = Field(default="", description="Why, in the reviewer's words (optional).")
    reviewer: str | None = Field(default=None, description="Who decided (optional).")

    @field_validator("quality", mode="before")
    @classmethod
    def _short_forms(cls, value: object) -> object:
        if isinstance(value, str):
            text = value.strip().lower()
            return {"s": "success", "f": "failure"}.get(text, text)
        return value

    @field_validator("rcof", mode="before")
    @classmethod
    def _code(cls, value: object) -> object:
        return normalise_rcof(value)

    @model_validator(mode="after")
    def _cause_only_for_failure(self) -> HumanVerdict:
        if self.quality == "success" and self.rcof is not None:
            raise ValueError("a successful turn has no root cause; leave rcof null")
        return self


def majority(labels: Sequence[str]) -> str | None:
    """The label given by a strict majority of ``labels``, else None."""
    # A strict majority is unique: the first label counted past half is it (a panel gives a
    # few labels a turn, and list.count is cheaper than a Counter and its most_common).
    for label in dict.fromkeys(labels):
        if labels.count(label) * 2 > len(labels):
            return label
    return None


AGREEMENT = 2
"""Teachers that must agree on a turn's quality (paper 004, §6: "two or more")."""


def vote_turn(
    turn_number: int,
    teachers: Sequence[dict[str, Any]],
    certain: tuple[str, str] | None = None,
    served: str | None = None,
) -> dict[str, Any]:
    """The voted labels of one turn from each teacher's ``{judge, quality, rcof, rationale}``.

    Args:
        turn_number: The turn (1-based).
        teachers: Every configured teacher's label of the turn, in teacher order.
        certain: ``(code, reason)`` when the turn carries certain evidence of a failure.
        served: Why the transcript shows the turn served the request (certain evidence wins).
    """
    judged = [t for t in teachers if t["quality"] is not None]
    voted: dict[str, Any] = {
        "turn_number": turn_number,
        "quality": None,
        "rcof": None,
        "ambiguous": False,
        "ambiguous_fields": [],
        "decided_by": None,
        "teachers": list(teachers),
    }
    if certain is not None:
        code, reason = certain
        return voted | {
            "quality": "failure",
            "rcof": code,
            "decided_by": "certain_evidence",
            "certain_evidence": reason,
        }
    if served is not None:
        return voted | {
            "quality": "success",
            "decided_by": "tool_evidence",
            "tool_evidence": served,
        }
    if not judged:
        return voted | {"undecided_reason": "no teacher could judge the turn"}
    quality = majority([t["quality"] for t in judged])
    needed = min(AGREEMENT, len(teachers))
    if quality is None:
        return voted | {"ambiguous": True, "ambiguous_fields": ["quality"]}
    agreeing = sum(t["quality"] == quality for t in judged)
    if agreeing < needed:
        (lone,) = [t for t in judged if t["quality"] == quality]
        return voted | {
            "decided_by": "undecided",
            "lone_label": {"judge": lone["judge"], "quality": quality, "rcof": lone["rcof"]},
            "undecided_reason": f"only {lone['judge']} could judge the turn ({quality}); "
            f"the vote needs {needed} teachers to agree",
        }
    voted["decided_by"] = "single_teacher" if len(teachers) == 1 else "vote"
    voted["quality"] = quality
    if quality == "failure":
        codes = [t["rcof"] for t in judged if t["quality"] == "failure" and t["rcof"]]
        rcof = majority(codes)
        if codes and rcof is None:
            return voted | {"ambiguous": True, "ambiguous_fields": ["rcof"]}
        voted["rcof"] = rcof
    return voted


def escalation_case(dialogue: Dialogue, turn: dict[str, Any], error: str | None) -> dict[str, Any]:
    """The interrupt payload: the excerpt, the teachers' labels and what to answer."""
    k = turn["turn_number"]
    excerpt = [
        {
            "turn_number": t.turn_number,
            "user_msg": t.user_msg,
            "response": t.response,
            "source_names": t.source_names,
            "source_snippets": t.source_snippets,
        }
        for t in dialogue.turns
        if abs(t.turn_number - k) <= EXCERPT_RADIUS
    ]
    case: dict[str, Any] = {
        "kind": ESCALATION_KIND,
        "dialogue_id": dialogue.dialogue_id,
        "turn_number": k,
        "ambiguous_fields": turn["ambiguous_fields"],
        "voted_quality": turn["quality"],
        "excerpt": excerpt,
        "teachers": turn["teachers"],
        "answer_with": {
            "quality": "success | failure",
            "rcof": "E1..E7 for a failure, else null",
            "note": "optional",
        },
        "rcof_codes": RCOF_CODES,
    }
    if error:
        case["error"] = error
    return case


def ask_human(dialogue: Dialogue, turn: dict[str, Any]) -> HumanVerdict:
    """``interrupt()`` until the reviewer's answer validates (each retry is a new interrupt)."""
    error: str | None = None
    while True:
        answer = interrupt(escalation_case(dialogue, turn, error))
        try:
            return HumanVerdict.model_validate(answer)
        except ValidationError as invalid:
            first = invalid.errors()[0]
            error = f"invalid verdict {answer!r}: {first['msg']}"


# -- nodes -----------------------------------------------------------------------------------
# Routers take a plain mapping: LangGraph evaluates their type hints at build time, and the
# state types live in the graph module, which imports this one.


def send_to_teachers(state: Mapping[str, Any], runtime: Runtime[Context]) -> list[Send]:
    """Fan the dialogue out to ``Context.teachers`` (``Send``, in parallel).

    Each LLM teacher gets a task of its own (they wait on their providers, side by side); the
    local ones share one (CPU-bound: in threads they would only take turns at the interpreter).

    Raises:
        ValueError: ``Context.teachers`` is empty.
    """
    panel = list(get_context(runtime).specs("turn_quality"))
    if not panel:
        raise ValueError("Context.teachers is empty: teacher voting needs at least one teacher")
    local = [(i, spec) for i, spec in enumerate(panel) if parse_spec(spec).is_local]
    remote = [(i, spec) for i, spec in enumerate(panel) if (i, spec) not in local]
    panels = ([local] if local else []) + [[pair] for pair in remote]
    return [
        Send(
            "label_turns",
            {
                "dialogue": state["dialogue"],
                "teachers": [{"index": index, "teacher": spec} for index, spec in panel],
            },
        )
        for panel in panels
    ]


def label_turns(task: TeacherTask, runtime: Runtime[Context]) -> dict[str, Any]:
    """The task's teachers label every turn, one after the other."""
    context = get_context(runtime)
    # Filtered once for every teacher of the task: words to a judge earn nothing.
    dialogue = addressed_to_user(read_dialogue(task["dialogue"]))
    return {"labels": [_labels(dialogue, item, context) for item in task["teachers"]]}


def _labels(dialogue: Dialogue, item: Mapping[str, Any], context: Context) -> dict[str, Any]:
    """One teacher's labels of every turn."""
    judge = teacher(item["teacher"], context)
    verdict = judge.label(dialogue, routes=GoalSuccessSettings.of(context).routes)
    turns = [
        {"judge": verdict.judge, "quality": t.quality, "rcof": t.rcof, "rationale": t.rationale}
        | ({"is_new_goal": t.is_new_goal} if t.is_new_goal is not None else {})
        for t in verdict.turns
    ]
    if [t.turn_number for t in verdict.turns] != [t.turn_number for t in dialogue.turns]:
        raise ValueError(f"teacher {judge.name} did not label every turn in order")
    return {"index": item["index"], "judge": verdict.judge, "turns": turns}


def addressed_to_user(dialogue: Dialogue) -> Dialogue:
    """The dialogue with each reply's sentences to a judge dropped (:func:`to_the_user`)."""
    replies = [to_the_user(turn.response) for turn in dialogue.turns]
    if all(new is turn.response for new, turn in zip(replies, dialogue.turns, strict=True)):
        return dialogue
    turns = [
        turn.model_copy(update={"response": new})
        for new, turn in zip(replies, dialogue.turns, strict=True)
    ]
    return dialogue.model_copy(update={"turns": turns})


def vote_labels(state: VotingState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Majority vote per turn and field over the teachers that could judge.

    A turn whose log states a failure (an empty reply, an error, a failed tool action, an echo
    of the user, a hand-over with nothing done, a claimed action with no tool call behind it:
    see :func:`certain_failures`) is decided by that evidence alone; else a turn the tool
    evidence shows served is a success (:func:`served_turns`).
    """
    labels = sorted(state["labels"], key=lambda teacher: teacher["index"])
    dialogue = read_dialogue(state["dialogue"])
    certain = certain_failures(dialogue)
    # served_turns reads the user's complaints on a tool transcript only: elsewhere (SGD, chat
    # logs) they are not worked out at all.
    if has_tool_channel(dialogue):
        complained = complaints(dialogue)
    else:
        complained = [False] * len(dialogue.turns)
    tool_served = served_turns(dialogue, complained)
    return {
        "dialogue_id": dialogue.dialogue_id,
        "teachers": list(get_context(runtime).specs("turn_quality")),
        "turns": [
            vote_turn(
                turn.turn_number,
                [dict(teacher["turns"][i]) for teacher in labels],
                certain=certain[i],
                served=tool_served[i],
            )
            for i, turn in enumerate(dialogue.turns)
        ],
        "human_verdicts": [],
    }


def route_after_vote(
    state: Mapping[str, Any], runtime: Runtime[Context]
) -> Literal["escalate_to_human", "__end__"]:
    """Escalate when a turn is ambiguous and escalation is on."""
    ambiguous = any(turn["ambiguous"] for turn in state["turns"])
    return (
        "escalate_to_human"
        if ambiguous and GoalSuccessSettings.of(get_context(runtime)).escalate_ambiguous
        else "__end__"
    )


def escalate_to_human(state: VotingState) -> dict[str, Any]:
    """Ask a human about each ambiguous turn, in order; apply the verdicts."""
    dialogue = read_dialogue(state["dialogue"])
    turns: list[dict[str, Any]] = []
    verdicts: list[dict[str, Any]] = []
    for voted in state["turns"]:
        turn = dict(voted)
        if not turn["ambiguous"]:
            turns.append(turn)
            continue
        verdict = ask_human(dialogue, turn)
        record = {"turn_number": turn["turn_number"], **verdict.model_dump()}
        verdicts.append(record)
        turns.append(turn | {"quality": verdict.quality, "rcof": verdict.rcof} | _human(record))
    return {"turns": turns, "human_verdicts": verdicts}


def _human(record: dict[str, Any]) -> dict[str, Any]:
    return {"decided_by": "human", "human": record}
