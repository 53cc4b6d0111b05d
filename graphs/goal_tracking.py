"""Goal tracker subsystem: ATOD's agentic memory over a dialogue, turn by turn (paper 000, §5).

Offline, one call carries a whole dialogue (``utterances`` = every utterance, ``final=True``).
Online, each call on the same thread adds the utterances said since the last call and returns
the current goal states; ``final=True`` on the last call runs the closing audit.

``append_utterances`` -> ``sync_memory`` -> per utterance ``extract_goals`` ->
``check_existence`` -> ``update_memory`` (-> ``proactive_audit`` every ``audit_every``
utterances and at the end).

``baseline_graph`` runs one of the paper's baselines (``Context.goal_tracker``: full-context,
LLM-Rsum, RAG, MemoChat, MemoryBank) with the same input and output, one answer per utterance
(:mod:`nodes.goal_tracking.baselines.tracker`).

``synthesis_graph`` is ATOD's synthetic-data pipeline (§4): one dialogue per thread, from a
sampled goal set to a quality-checked annotated dialogue (:mod:`nodes.goal_tracking.synthesis`).
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph

from nodes.context import Context
from nodes.goal_tracking.baselines.tracker import baseline_step, route_baseline
from nodes.goal_tracking.state import (
    GoalTrackingInput,
    GoalTrackingOutput,
    GoalTrackingState,
)
from nodes.goal_tracking.synthesis.pipeline import (
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
from nodes.goal_tracking.synthesis.state import (
    AtodSynthesisInput,
    AtodSynthesisOutput,
    AtodSynthesisState,
)
from nodes.goal_tracking.tracker import (
    append_utterances,
    check_existence_node,
    extract_goals,
    proactive_audit,
    route_after_update,
    route_next,
    sync_memory,
    update_memory,
)


def _tracker_builder() -> StateGraph[Any, Context, Any, Any]:
    """A goal tracker's builder: utterances in, goals out (ATOD's and the baselines' alike)."""
    return StateGraph(
        GoalTrackingState,
        context_schema=Context,
        input_schema=GoalTrackingInput,
        output_schema=GoalTrackingOutput,
    )


def build_goal_tracking_graph() -> StateGraph[Any, Context, Any, Any]:
    """The turn pipeline as a loop over unprocessed utterances."""
    builder = _tracker_builder()
    builder.add_node("append_utterances", append_utterances)
    builder.add_node("sync_memory", sync_memory)
    builder.add_node("extract_goals", extract_goals)
    builder.add_node("check_existence", check_existence_node)
    builder.add_node("update_memory", update_memory)
    builder.add_node("proactive_audit", proactive_audit)
    builder.add_edge(START, "append_utterances")
    builder.add_edge("append_utterances", "sync_memory")
    builder.add_conditional_edges(
        "sync_memory", route_next, ["extract_goals", "proactive_audit", END]
    )
    builder.add_edge("extract_goals", "check_existence")
    builder.add_edge("check_existence", "update_memory")
    builder.add_conditional_edges(
        "update_memory", route_after_update, ["proactive_audit", "extract_goals", END]
    )
    builder.add_conditional_edges(
        "proactive_audit", route_next, ["extract_goals", "proactive_audit", END]
    )
    return builder


def build_baseline_tracking_graph() -> StateGraph[Any, Context, Any, Any]:
    """A baseline's answer after every utterance (no audit: the baselines have none)."""
    builder = _tracker_builder()
    builder.add_node("append_utterances", append_utterances)
    builder.add_node("baseline_step", baseline_step)
    builder.add_edge(START, "append_utterances")
    builder.add_conditional_edges("append_utterances", route_baseline, ["baseline_step", END])
    builder.add_conditional_edges("baseline_step", route_baseline, ["baseline_step", END])
    return builder


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
