"""Nodes of the goal-segmentation graph (paper 004, Section 4.1)."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from evals.metrics.goal_success.segmentation import goal_spans
from evals.schema import Dialogue
from nodes.context import Context, get_context
from nodes.goal_success.judges.segmentation import segmentation_judge
from nodes.goal_success.state import SegmentationState


def segment_goals(state: SegmentationState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Ask the configured judge whether each turn starts a new goal."""
    context = get_context(runtime)
    dialogue = Dialogue.model_validate(state["dialogue"])
    judge = segmentation_judge(context.segmentation_judge, context.llm_max_retries)
    verdict = judge.segment(
        dialogue,
        time_gap_minutes=context.time_gap_minutes,
        threshold=context.new_goal_threshold,
    )
    probabilities = verdict.probabilities or [None] * len(dialogue.turns)
    turns = [
        {"turn_number": turn.turn_number, "is_new_goal": label, "p_new_goal": p}
        for turn, label, p in zip(dialogue.turns, verdict.is_new_goal, probabilities, strict=True)
    ]
    return {
        "dialogue_id": dialogue.dialogue_id,
        "turns": turns,
        "judge": verdict.judge,
        "reason": verdict.reason,
    }


def build_goal_spans(state: SegmentationState) -> dict[str, Any]:
    """Goals as contiguous turn spans; an unlabelled turn (``None``) continues its goal."""
    labels = [bool(turn["is_new_goal"]) for turn in state["turns"]]
    return {
        "goals": [
            {"goal_index": index, "start_turn": start, "end_turn": end}
            for index, (start, end) in enumerate(goal_spans(labels))
        ]
    }
