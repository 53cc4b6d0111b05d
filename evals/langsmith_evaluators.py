"""The goal-success metrics (paper 004) as LangSmith evaluators.

Use them with ``langsmith.evaluate`` to score and compare runs of the goal-success graph::

    examples = [dialogue_example(dialogue) for dialogue in dialogues]
    client.create_examples(dataset_id=dataset.id, examples=examples)  # or pass Examples offline
    langsmith.evaluate(
        target,  # inputs {"dialogue": ...} -> {"dialogue_id", "goals", "turns"}
        data=dataset.name,
        evaluators=ROW_EVALUATORS,
        summary_evaluators=SUMMARY_EVALUATORS,
    )

Offline (nothing uploaded, no server contacted), pass ``langsmith.schemas.Example`` objects as
``data``, ``upload_results=False`` and a client that never needs the network, e.g.
``Client(api_url="http://127.0.0.1:9", api_key="unused", auto_batch_tracing=False, info={})``.

The target's outputs are ``{"dialogue_id", "goals": [score_goals output], "turns": [voted
turns]}``; an example's reference outputs are the gold ``{"turns": [{"turn_number",
"is_new_goal", "quality", "rcof"}]}`` (any label may be ``None``). Predicted and gold turns are
matched by ``turn_number``. Every evaluator takes both ``outputs`` and ``reference_outputs``
(LangSmith passes arguments by name), whether or not it reads both, and returns ``{"key",
"score", "comment"}``; the score is ``None`` (and the comment says why) when the metric cannot
be computed, e.g. without gold labels, so LangSmith's averages are over the examples where it
could.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NotRequired, TypedDict

from evals.metrics.agreement import cohen_kappa, paired
from evals.metrics.goal_success import success_rate as gs
from evals.metrics.goal_success.segmentation import boundary_prf, goal_spans
from evals.metrics.goal_success.teacher_agreement import labeller_agreement
from evals.schema import Dialogue


class Feedback(TypedDict):
    """What an evaluator returns: LangSmith's feedback key, score and an optional comment."""

    key: str
    score: float | None
    comment: NotRequired[str]


RowEvaluator = Callable[[dict[str, Any], dict[str, Any]], Feedback]
SummaryEvaluator = Callable[[list[dict[str, Any]], list[dict[str, Any]]], Feedback]


def dialogue_example(dialogue: Dialogue) -> dict[str, Any]:
    """A LangSmith example for a dialogue: the dialogue as input, its gold turn labels as output.

    Returns:
        ``{"inputs": {"dialogue": <JSON dict>}, "outputs": {"turns": [{"turn_number",
        "is_new_goal", "quality", "rcof"}]}}``, ready for ``Client.create_examples``.
    """
    return {
        "inputs": {"dialogue": dialogue.model_dump(mode="json")},
        "outputs": {
            "turns": [
                {
                    "turn_number": turn.turn_number,
                    "is_new_goal": turn.is_new_goal,
                    "quality": turn.quality,
                    "rcof": turn.rcof,
                }
                for turn in dialogue.turns
            ]
        },
    }


# --- row evaluators -------------------------------------------------------------------------


def goal_success_rate(outputs: dict[str, Any], reference_outputs: dict[str, Any]) -> Feedback:
    """This dialogue's GSR: the share of its decided goals whose every turn succeeded."""
    goals = _goals(outputs)
    decided = [goal for goal in goals if goal["success"] is not None]
    comment = (
        f"{sum(goal['success'] for goal in decided)} of {len(decided)} decided goals succeeded; "
        f"{len(goals) - len(decided)} undecided"
    )
    return _feedback("goal_success_rate", gs.goal_success_rate(goals), comment)


def turn_quality_accuracy(outputs: dict[str, Any], reference_outputs: dict[str, Any]) -> Feedback:
    """Share of turns whose voted quality equals the gold quality (turns with both)."""
    scores = _vote_agreement(outputs, reference_outputs)["quality"]
    return _feedback(
        "turn_quality_accuracy",
        scores["accuracy"],
        f"over {scores['n']} turns with both a voted and a gold quality",
    )


def rcof_accuracy(outputs: dict[str, Any], reference_outputs: dict[str, Any]) -> Feedback:
    """Share of gold failed turns with a code whose voted code matches, among those given one.

    A turn the vote left without a code is not counted here but in ``rcof_coverage``.
    """
    scores = _vote_agreement(outputs, reference_outputs)["rcof"]
    coverage = "n/a" if scores["coverage"] is None else f"{scores['coverage']:.4g}"
    return _feedback(
        "rcof_accuracy",
        scores["accuracy"],
        f"over {scores['n']} gold failed turns with a code that the vote also coded "
        f"(coverage {coverage})",
    )


def rcof_coverage(outputs: dict[str, Any], reference_outputs: dict[str, Any]) -> Feedback:
    """Share of gold failed turns with a code to which the vote gave a code at all."""
    scores = _vote_agreement(outputs, reference_outputs)["rcof"]
    return _feedback(
        "rcof_coverage", scores["coverage"], "share of gold failed turns with a code coded"
    )


def segmentation_f1(outputs: dict[str, Any], reference_outputs: dict[str, Any]) -> Feedback:
    """F1 of the new-goal boundaries implied by the goal spans, against gold, over turns 2..N."""
    gold = _gold_segmentation(reference_outputs)
    if gold is None:
        return _feedback("segmentation_f1", None, "the example has no gold is_new_goal labels")
    starts = {int(goal["start_turn"]) for goal in _goals(outputs)}
    scores = boundary_prf(gold, [number in starts for number in range(1, len(gold) + 1)])
    comment = f"tp={scores.tp} fp={scores.fp} fn={scores.fn} over turns 2..{len(gold)}"
    if scores.f1 is None:
        comment += "; F1 undefined: no boundary in the gold or none predicted"
    return _feedback("segmentation_f1", scores.f1, comment)


# --- summary evaluators ---------------------------------------------------------------------


def gsr(outputs: list[dict[str, Any]], reference_outputs: list[dict[str, Any]]) -> Feedback:
    """GSR pooled over the goals of all dialogues (the paper's corpus figure, as a fraction)."""
    goals = [goal for output in outputs for goal in _goals(output)]
    undecided = sum(goal["success"] is None for goal in goals)
    comment = f"{len(goals)} goals of {len(outputs)} dialogues, {undecided} undecided"
    return _feedback("gsr", gs.goal_success_rate(goals), comment)


def turn_quality_kappa(
    outputs: list[dict[str, Any]], reference_outputs: list[dict[str, Any]]
) -> Feedback:
    """Cohen's kappa of voted vs gold turn quality, pooled over all dialogues' turns."""
    predicted: list[str | None] = []
    gold: list[str | None] = []
    for output, reference in zip(outputs, reference_outputs, strict=True):
        labels, references = _aligned(output, reference)
        predicted += [label["quality"] for label in labels]
        gold += [None if ref is None else ref.get("quality") for ref in references]
    comment = f"over {len(paired(predicted, gold))} turns with both a voted and a gold quality"
    return _feedback("turn_quality_kappa", cohen_kappa(predicted, gold), comment)


def gold_gsr(outputs: list[dict[str, Any]], reference_outputs: list[dict[str, Any]]) -> Feedback:
    """GSR from the gold turn labels and gold segmentation, to set the system's GSR against."""
    goals: list[dict[str, Any]] = []
    unsegmented = 0
    for reference in reference_outputs:
        labels = _gold_segmentation(reference)
        if labels is None:
            unsegmented += 1
            continue
        spans = [
            {"goal_index": index, "start_turn": start, "end_turn": end}
            for index, (start, end) in enumerate(goal_spans(labels))
        ]
        goals += gs.score_goals(spans, _gold_turns(reference))
    comment = (
        f"{len(goals)} gold goals; {unsegmented} dialogues left out for lack of gold segmentation"
    )
    return _feedback("gold_gsr", gs.goal_success_rate(goals), comment)


ROW_EVALUATORS: list[RowEvaluator] = [
    goal_success_rate,
    turn_quality_accuracy,
    rcof_accuracy,
    rcof_coverage,
    segmentation_f1,
]
"""Per-example evaluators, for ``evaluate(..., evaluators=ROW_EVALUATORS)``."""

SUMMARY_EVALUATORS: list[SummaryEvaluator] = [gsr, turn_quality_kappa, gold_gsr]
"""Experiment-level evaluators, for ``evaluate(..., summary_evaluators=SUMMARY_EVALUATORS)``."""


def _feedback(key: str, score: float | None, comment: str) -> Feedback:
    return {
        "key": key,
        "score": score,
        "comment": comment if score is not None else f"no score: {comment}",
    }


def _goals(outputs: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    return list((outputs or {}).get("goals") or [])


def _gold_turns(reference_outputs: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    turns = (reference_outputs or {}).get("turns") or []
    return sorted(turns, key=lambda turn: int(turn["turn_number"]))


def _gold_segmentation(reference_outputs: Mapping[str, Any] | None) -> list[bool] | None:
    """Gold ``is_new_goal`` per turn (turn 1 always True); ``None`` if a later one is missing."""
    turns = _gold_turns(reference_outputs)
    if not turns or any(turn.get("is_new_goal") is None for turn in turns[1:]):
        return None
    return [True] + [bool(turn["is_new_goal"]) for turn in turns[1:]]


def _aligned(
    outputs: Mapping[str, Any] | None, reference_outputs: Mapping[str, Any] | None
) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any] | None]]:
    """Voted labels and gold labels per gold turn; a turn the output lacks counts as unjudged."""
    voted = {int(turn["turn_number"]): turn for turn in (outputs or {}).get("turns") or []}
    gold = _gold_turns(reference_outputs)
    missing: Mapping[str, Any] = {"quality": None, "rcof": None}
    labels = [voted.get(int(turn["turn_number"]), missing) for turn in gold]
    return labels, list(gold)


def _vote_agreement(
    outputs: Mapping[str, Any] | None, reference_outputs: Mapping[str, Any] | None
) -> dict[str, Any]:
    labels, references = _aligned(outputs, reference_outputs)
    return labeller_agreement(labels, references, ndigits=None)
