"""Goal success subsystem (paper 004, "Mind the Goal"): three graphs, composed.

``goal_segmentation`` (Section 4.1): ``segment_goals`` (the judge) -> ``build_goal_spans``;
per turn ``is_new_goal`` (turn 1 always starts a goal) and the goal spans.

``teacher_voting`` (Section 6): ``label_turns`` (``Send`` from the start, in parallel: once per
LLM teacher, once for all the local ones) -> ``vote_labels`` -> ``escalate_to_human``
when a turn is ambiguous: the graph pauses with ``interrupt()`` and resumes with
``Command(resume={"quality": ..., "rcof": ..., "note": ...})``, in the CLI (``todeval review``)
or in LangGraph Studio. See :mod:`nodes.goal_success.voting` for the voting rules.

``goal_success`` (Sections 4.2-4.3): ``goal_segmentation`` (the segmentation graph's steps) ->
``teacher_voting`` (subgraph; may pause for a human) -> ``score_goals``: a goal succeeds only
if every turn in it succeeds, and a failed goal's root cause is the code of its earliest failed
turn. Each goal also
carries the paper's footnote-1 alternatives: fractional credit and last-turn success.

``teacher_voting`` runs inside a wrapper node (its state keys differ from the parent's) on the
parent's checkpointer, so its state stays inspectable with ``get_state(config, subgraphs=True)``
and an interrupt inside it pauses the whole thread.

When nothing can pause (no escalation) and every teacher is local (one labelling task),
:func:`goal_success_steps` runs the same steps as plain functions: a nested Pregel loop around
them would only add its per-step cost (about a tenth of a warm corpus run), never a checkpoint
to come back to.
"""

from __future__ import annotations

from typing import Any, cast

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict

from todeval.nodes.context import Context, get_context
from todeval.nodes.goal_success.scoring import score_goals
from todeval.nodes.goal_success.segmentation import build_goal_spans, segment_goals
from todeval.nodes.goal_success.settings import GoalSuccessSettings
from todeval.nodes.goal_success.state import (
    GoalSuccessInput,
    GoalSuccessOutput,
    GoalSuccessState,
    SegmentationInput,
    SegmentationOutput,
    SegmentationState,
    TeacherTask,
    VotingInput,
    VotingOutput,
    VotingState,
)
from todeval.nodes.goal_success.voting import (
    escalate_to_human,
    label_turns,
    route_after_vote,
    send_to_teachers,
    vote_labels,
)
from todeval.nodes.judges.spec import parse_spec


def build_goal_segmentation_graph() -> StateGraph[Any, Context, Any, Any]:
    """``segment_goals`` (the judge) then ``build_goal_spans``."""
    builder = StateGraph(
        SegmentationState,
        context_schema=Context,
        input_schema=SegmentationInput,
        output_schema=SegmentationOutput,
    )
    builder.add_node("segment_goals", segment_goals)
    builder.add_node("build_goal_spans", build_goal_spans)
    builder.add_edge(START, "segment_goals")
    builder.add_edge("segment_goals", "build_goal_spans")
    builder.add_edge("build_goal_spans", END)
    return builder


segmentation_graph = build_goal_segmentation_graph().compile(name="goal_segmentation")


def build_teacher_voting_graph() -> StateGraph[Any, Context, Any, Any]:
    """Teachers in parallel, then the vote, then (if needed) the human."""
    builder = StateGraph(
        VotingState,
        context_schema=Context,
        input_schema=VotingInput,
        output_schema=VotingOutput,
    )
    # A Send target reads its own input (TeacherTask: the dialogue and its teachers).
    builder.add_node("label_turns", cast(Any, label_turns), input_schema=TeacherTask)
    builder.add_node("vote_labels", vote_labels)
    builder.add_node("escalate_to_human", escalate_to_human)
    builder.add_conditional_edges(START, send_to_teachers, ["label_turns"])
    builder.add_edge("label_turns", "vote_labels")
    builder.add_conditional_edges("vote_labels", route_after_vote, ["escalate_to_human", END])
    builder.add_edge("escalate_to_human", END)
    return builder


voting_graph = build_teacher_voting_graph().compile(name="teacher_voting")


def run_goal_segmentation(state: GoalSuccessState, runtime: Runtime[Context]) -> dict[str, Any]:
    """The goal-segmentation graph's two steps on this dialogue, called as functions.

    Nothing in them pauses, so running them as a nested graph would give no checkpoint to come
    back to, only the cost of one (``segmentation_graph`` serves ``--segmentation-only``).
    """
    labels = segment_goals(cast(SegmentationState, {"dialogue": state["dialogue"]}), runtime)
    output = labels | build_goal_spans(cast(SegmentationState, labels))
    return {"dialogue_id": output["dialogue_id"], "segmentation": output}


def run_teacher_voting(state: GoalSuccessState, runtime: Runtime[Context]) -> dict[str, Any]:
    """The teacher-voting subgraph on this dialogue (pauses here for a human when ambiguous)."""
    output = voting_graph.invoke({"dialogue": state["dialogue"]}, context=get_context(runtime))
    return {
        "turns": output["turns"],
        "teachers": output["teachers"],
        "human_verdicts": output["human_verdicts"],
    }


def build_goal_success_graph() -> StateGraph[Any, Context, Any, Any]:
    """Segment, vote, score."""
    builder = StateGraph(
        GoalSuccessState,
        context_schema=Context,
        input_schema=GoalSuccessInput,
        output_schema=GoalSuccessOutput,
    )
    builder.add_node("goal_segmentation", run_goal_segmentation)
    builder.add_node("teacher_voting", run_teacher_voting)
    builder.add_node("score_goals", score_goals)
    builder.add_edge(START, "goal_segmentation")
    builder.add_edge("goal_segmentation", "teacher_voting")
    builder.add_edge("teacher_voting", "score_goals")
    builder.add_edge("score_goals", END)
    return builder


graph = build_goal_success_graph().compile(name="goal_success")


def runs_as_functions(context: Context) -> bool:
    """Whether :func:`goal_success_steps` can stand in for ``graph``.

    It can when no escalation can pause it and the teachers are all local (one labelling task,
    nothing to run in parallel).
    """
    teachers = context.specs("turn_quality")
    return (
        not GoalSuccessSettings.of(context).escalate_ambiguous
        and bool(teachers)
        and all(parse_spec(spec).is_local for spec in teachers)
    )


def goal_success_steps(dialogue: dict[str, Any], runtime: Runtime[Context]) -> GoalSuccessOutput:
    """``graph``'s steps on ``dialogue`` as functions (see :func:`runs_as_functions`).

    Returns:
        The output ``graph`` gives, key for key.
    """
    state = cast(GoalSuccessState, {"dialogue": dialogue})
    state.update(cast(GoalSuccessState, run_goal_segmentation(state, runtime)))
    panel = [
        {"index": i, "teacher": spec}
        for i, spec in enumerate(get_context(runtime).specs("turn_quality"))
    ]
    labels = label_turns(cast(TeacherTask, {"dialogue": dialogue, "teachers": panel}), runtime)
    voted = vote_labels(cast(VotingState, {"dialogue": dialogue} | labels), runtime)
    state.update(cast(GoalSuccessState, {key: voted[key] for key in VotingOutput.__annotations__}))
    state.update(cast(GoalSuccessState, score_goals(state)))
    return cast(
        GoalSuccessOutput,
        {key: state[key] for key in GoalSuccessOutput.__annotations__},  # type: ignore[literal-required]
    )


class GoalSuccessTask(TypedDict):
    """What the evaluation hands goal success: the record's dialogue view (JSON)."""

    dialogue: dict[str, Any]


def run_goal_success(payload: GoalSuccessTask, runtime: Runtime[Context]) -> dict[str, Any]:
    """The evaluation's goal-success branch: segmentation, teacher voting and GSR.

    As functions when nothing in them can pause or run in parallel (:func:`runs_as_functions`).
    """
    context = get_context(runtime)
    if runs_as_functions(context):
        return {"results": {"goal_success": goal_success_steps(payload["dialogue"], runtime)}}
    output = graph.invoke({"dialogue": payload["dialogue"]}, context=context)
    return {"results": {"goal_success": output}}
