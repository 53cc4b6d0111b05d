"""Nodes of the goal-segmentation graph (paper 004, Section 4.1)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langgraph.runtime import Runtime

from todeval.evals.metrics.goal_success.segmentation import goal_spans
from todeval.nodes.context import Context, get_context
from todeval.nodes.goal_success.roles import segmenter
from todeval.nodes.goal_success.settings import GoalSuccessSettings
from todeval.nodes.goal_success.state import SegmentationState, read_dialogue


def segment_goals(state: SegmentationState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Ask the configured judge whether each turn starts a new goal."""
    context = get_context(runtime)
    dialogue = read_dialogue(state["dialogue"])
    judge = segmenter(context)
    verdict = judge.segment(
        dialogue,
        time_gap_minutes=GoalSuccessSettings.of(context).time_gap_minutes,
        threshold=GoalSuccessSettings.of(context).new_goal_threshold,
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
    """Goals as contiguous turn spans; none when a turn has no label (never a guess)."""
    return goal_spans_of(state["turns"], state.get("reason"))


def goal_spans_of(turns: Sequence[Mapping[str, Any]], reason: str | None) -> dict[str, Any]:
    """``goals`` from per-turn ``is_new_goal``; with an unlabelled turn, no goals and ``reason``.

    A turn whose boundary nobody could label would otherwise have to be guessed (one goal per
    dialogue, say), which moves GSR silently; the dialogue's goals stay unknown instead.
    """
    missing = [t["turn_number"] for t in turns[1:] if t["is_new_goal"] is None]
    if missing:
        why = f"no is_new_goal label for turns {missing}, so its goals are unknown"
        return {"goals": [], "reason": f"{why} ({reason})" if reason else why}
    labels = [True] + [bool(t["is_new_goal"]) for t in turns[1:]]
    return {
        "goals": [
            {"goal_index": index, "start_turn": start, "end_turn": end}
            for index, (start, end) in enumerate(goal_spans(labels))
        ]
    }


def vote_boundaries(
    segmentation: Mapping[str, Any], voted_turns: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """The segmenter's boundaries, voted with the teachers that also segment (paper 004).

    Per turn the panel is the segmenter and every teacher that gave ``is_new_goal`` (LLM
    teachers answer it in their single call); a teacher with the segmenter's own spec is the
    same call and counts once. The majority wins; a tie keeps the segmenter's label. With no
    segmenting teacher the segmentation is returned as it is.
    """
    judge = segmentation["judge"]
    teacher_labels: dict[str, dict[int, bool]] = {}
    for turn in voted_turns:
        for label in turn["teachers"]:
            if label.get("is_new_goal") is not None and label["judge"] != judge:
                teacher_labels.setdefault(label["judge"], {})[turn["turn_number"]] = bool(
                    label["is_new_goal"]
                )
    if not teacher_labels:
        return dict(segmentation)
    turns = []
    for turn in segmentation["turns"]:
        own = turn["is_new_goal"]
        votes = [own] if own is not None else []
        votes += [labels[turn["turn_number"]] for labels in teacher_labels.values()
                  if turn["turn_number"] in labels]  # fmt: skip
        label = own if turn["turn_number"] == 1 else _boundary_majority(votes, own)
        turns.append(dict(turn) | {"is_new_goal": label})
    voted = dict(segmentation) | {"turns": turns, "voted_by": [judge, *teacher_labels]}
    return voted | goal_spans_of(turns, segmentation.get("reason"))


def _boundary_majority(votes: Sequence[bool], tie_break: bool | None) -> bool | None:
    if not votes:
        return None
    yes = sum(votes)
    if yes * 2 == len(votes):
        return tie_break if tie_break is not None else None
    return yes * 2 > len(votes)
