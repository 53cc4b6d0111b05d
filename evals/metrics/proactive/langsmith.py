"""ProactiveEval's scores as LangSmith evaluators (one per figure of a task's result line).

The target of an experiment returns one ``results.jsonl`` line of ``todeval proactive plan`` or
``guide`` (the planning or guidance graph's output); each row evaluator scores one figure of it,
or ``None`` with a comment when the line has none (no plan, a judge that abstained). The summary
evaluators give the mean over the experiment's lines; mean and std over runs stay in
``summary.json``, since LangSmith sees one run per experiment. Keys are literal, as LangSmith reads
a row evaluator's key from its source::

    langsmith.evaluate(target, data=examples, evaluators=GUIDANCE_EVALUATORS,
                       summary_evaluators=GUIDANCE_SUMMARY_EVALUATORS)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from statistics import fmean
from typing import Any

from todeval.evals.metrics.proactive.tasks import FIGURES, Task

Feedback = dict[str, Any]


def _score(task: Task, figure: str, key: str, outputs: Mapping[str, Any] | None) -> Feedback:
    value = FIGURES[task][figure](outputs or {})
    comment = "" if value is not None else f"no {figure} in this line (unscored or failed)"
    return {"key": key, "score": value, "comment": comment}


def plan_score(outputs: dict[str, Any], reference_outputs: dict[str, Any]) -> Feedback:
    """The target-planning judge's 1-10 score (Listing 11)."""
    return _score("plan", "score", "plan_score", outputs)


def guidance_score(outputs: dict[str, Any], reference_outputs: dict[str, Any]) -> Feedback:
    """The guidance judge's 1-10 score (Listing 12)."""
    return _score("guide", "score", "guidance_score", outputs)


def target_reached(outputs: dict[str, Any], reference_outputs: dict[str, Any]) -> Feedback:
    """1 when the dialogue reached the target before the turn limit."""
    return _score("guide", "reached", "target_reached", outputs)


def guidance_turns(outputs: dict[str, Any], reference_outputs: dict[str, Any]) -> Feedback:
    """Turns the dialogue took."""
    return _score("guide", "turns", "guidance_turns", outputs)


def target_density(outputs: dict[str, Any], reference_outputs: dict[str, Any]) -> Feedback:
    """Sub-targets per agent message (Listing 13)."""
    return _score("guide", "target_density", "target_density", outputs)


def initiation_density(outputs: dict[str, Any], reference_outputs: dict[str, Any]) -> Feedback:
    """Sub-targets in the opening message (Listing 13)."""
    return _score("guide", "initiation_density", "initiation_density", outputs)


def _mean(task: Task, figure: str, key: str, outputs: list[dict[str, Any]]) -> Feedback:
    values = [v for v in (FIGURES[task][figure](o or {}) for o in outputs) if v is not None]
    comment = f"mean over {len(values)} of {len(outputs)} lines" if values else "nothing scored"
    return {"key": key, "score": fmean(values) if values else None, "comment": comment}


def plan_score_mean(
    outputs: list[dict[str, Any]], reference_outputs: list[dict[str, Any]]
) -> Feedback:
    """Mean target-planning score over the experiment."""
    return _mean("plan", "score", "plan_score_mean", outputs)


def guidance_score_mean(
    outputs: list[dict[str, Any]], reference_outputs: list[dict[str, Any]]
) -> Feedback:
    """Mean guidance score over the experiment."""
    return _mean("guide", "score", "guidance_score_mean", outputs)


def target_reached_rate(
    outputs: list[dict[str, Any]], reference_outputs: list[dict[str, Any]]
) -> Feedback:
    """Share of dialogues that reached the target."""
    return _mean("guide", "reached", "target_reached_rate", outputs)


RowEvaluator = Callable[[dict[str, Any], dict[str, Any]], Feedback]
SummaryEvaluator = Callable[[list[dict[str, Any]], list[dict[str, Any]]], Feedback]

GUIDANCE_EVALUATORS: list[RowEvaluator] = [
    guidance_score,
    target_reached,
    guidance_turns,
    target_density,
    initiation_density,
]
GUIDANCE_SUMMARY_EVALUATORS: list[SummaryEvaluator] = [guidance_score_mean, target_reached_rate]
