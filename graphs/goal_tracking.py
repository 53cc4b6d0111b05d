"""Goal tracker subsystem: ATOD's agentic memory over a dialogue, turn by turn (paper 000, §5).

Offline, one call carries a whole dialogue (``utterances`` = every utterance, ``final=True``).
Online, each call on the same thread adds the utterances said since the last call and returns
the current goal states; ``final=True`` on the last call runs the closing audit.

Node ``track_utterances``: the call's utterances join the history, the goal memory is
brought to the checkpointed snapshot, then per utterance Stage 0 ``extract_goals``, Stage 1
``check_existence_of``, Stages 2-3 ``update_memory``, and Stage 4 ``proactive_audit`` every
``audit_every`` utterances and at the end (a graph step per stage and utterance cost more than
the local stages: see :mod:`nodes.goal_tracking.tracker`). Then ``judge_dialogue``: on the final
call, the ``proactivity`` and ``response_quality`` roles judge the dialogue
(:mod:`nodes.goal_tracking.judging`), so their verdicts are checkpointed with the thread.

``baseline_graph`` runs one of the paper's baselines (``Context.goal_tracker``: full-context,
LLM-Rsum, RAG, MemoChat, MemoryBank) with the same input and output, one answer per utterance
(:mod:`nodes.goal_tracking.baselines.tracker`).

``synthesis_graph`` is ATOD's synthetic-data pipeline (§4): one dialogue per thread, from a
sampled goal set to a quality-checked annotated dialogue (:mod:`nodes.goal_tracking.synthesis`).
"""

from __future__ import annotations

from typing import Any, cast

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict

from todeval.nodes.context import Context, get_context
from todeval.nodes.goal_tracking.baselines.tracker import answer_utterances
from todeval.nodes.goal_tracking.judging import judge_dialogue, judged_dialogue
from todeval.nodes.goal_tracking.settings import GoalTrackingSettings
from todeval.nodes.goal_tracking.state import (
    GoalTrackingInput,
    GoalTrackingOutput,
    GoalTrackingState,
)
from todeval.nodes.goal_tracking.synthesis.pipeline import (
    annotate_statuses,
    annotate_trajectory,
    check_quality,
    generate_dialogue,
    reject,
    route_after_check,
    route_after_reject,
    route_stage,
    sample_trajectory,
)
from todeval.nodes.goal_tracking.synthesis.state import (
    AtodSynthesisInput,
    AtodSynthesisOutput,
    AtodSynthesisState,
)
from todeval.nodes.goal_tracking.tracker import track_utterances


def _tracker_builder() -> StateGraph[Any, Context, Any, Any]:
    """A goal tracker's builder: utterances in, goals out (ATOD's and the baselines' alike)."""
    return StateGraph(
        GoalTrackingState,
        context_schema=Context,
        input_schema=GoalTrackingInput,
        output_schema=GoalTrackingOutput,
    )


def _then_judged(
    builder: StateGraph[Any, Context, Any, Any], tracker: str
) -> StateGraph[Any, Context, Any, Any]:
    """``tracker``, then ``judge_dialogue``: proactivity and response quality, checkpointed."""
    builder.add_node("judge_dialogue", judge_dialogue)
    builder.add_edge(START, tracker)
    builder.add_edge(tracker, "judge_dialogue")
    builder.add_edge("judge_dialogue", END)
    return builder


def build_goal_tracking_graph() -> StateGraph[Any, Context, Any, Any]:
    """The turn pipeline, one node per call (online: one call per utterance), then the judges."""
    builder = _tracker_builder()
    builder.add_node("track_utterances", track_utterances)
    return _then_judged(builder, "track_utterances")


def build_baseline_tracking_graph() -> StateGraph[Any, Context, Any, Any]:
    """A baseline's answer after every utterance (no audit: the baselines have none)."""
    builder = _tracker_builder()
    builder.add_node("answer_utterances", answer_utterances)
    return _then_judged(builder, "answer_utterances")


def build_atod_synthesis_graph() -> StateGraph[Any, Context, Any, Any]:
    """Sample, annotate, generate, label, check; a failed stage samples again."""
    builder = StateGraph(
        AtodSynthesisState,
        context_schema=Context,
        input_schema=AtodSynthesisInput,
        output_schema=AtodSynthesisOutput,
    )
    stages = ["annotate_trajectory", "generate_dialogue", "annotate_statuses", "check_quality"]
    builder.add_node("sample_trajectory", sample_trajectory)
    builder.add_node("annotate_trajectory", annotate_trajectory)
    builder.add_node("generate_dialogue", generate_dialogue)
    builder.add_node("annotate_statuses", annotate_statuses)
    builder.add_node("check_quality", check_quality)
    builder.add_node("reject", reject)
    builder.add_edge(START, "sample_trajectory")
    for node in ("sample_trajectory", *stages[:-1]):
        builder.add_conditional_edges(node, route_stage, ["reject", *stages])
    builder.add_conditional_edges("check_quality", route_after_check, ["reject", END])
    builder.add_conditional_edges("reject", route_after_reject, ["sample_trajectory", END])
    return builder


graph = build_goal_tracking_graph().compile(name="goal_tracking")
baseline_graph = build_baseline_tracking_graph().compile(name="goal_tracking_baselines")
synthesis_graph = build_atod_synthesis_graph().compile(name="atod_synthesis")


class GoalTrackingTask(TypedDict):
    """What the evaluation hands goal tracking: the record's id and utterances in order."""

    dialogue_id: str
    utterances: list[dict[str, str]]


def run_goal_tracking(payload: GoalTrackingTask, runtime: Runtime[Context]) -> dict[str, Any]:
    """The evaluation's goal-tracking branch: ``Context.goal_tracker`` over the utterances.

    The tracker graphs' nodes (the tracker, then the proactivity and response-quality judges)
    run here as the functions they are (a nested graph would be a second Pregel loop around two
    calls; nothing in them pauses).
    """
    context = get_context(runtime)
    track = (
        track_utterances
        if GoalTrackingSettings.of(context).tracker == "atod"
        else answer_utterances
    )
    given = {"dialogue_id": payload["dialogue_id"], "utterances": payload["utterances"]}
    done = track(cast(GoalTrackingState, given | {"final": True}), runtime)
    done = done | judged_dialogue(payload["utterances"], done, context)
    output = {"dialogue_id": payload["dialogue_id"]} | {
        key: done[key] for key in GoalTrackingOutput.__annotations__ if key in done
    }
    return {"results": {"goal_tracking": output}}
