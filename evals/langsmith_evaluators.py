"""todeval's figures as LangSmith evaluators, so experiments can be compared in LangSmith.

The target returns a record's ``results.jsonl`` line, whose ``metrics`` hold
:class:`~evals.metrics.record_metrics.Part` s ``{"num", "den"}``. Per metric there is a row
evaluator (``num / den``, or ``None`` with a comment when the record has no part) and a summary
evaluator ``<metric>_corpus`` (``sum(num) / sum(den)``, as ``summary.json``). Records with gold
turn labels are also scored against them when the goal-success suite runs.

Use them with ``langsmith.evaluate``::

    langsmith.evaluate(
        target,  # inputs {"record": ...} -> a results.jsonl line
        data=[evaluation_example(record) for record in records],
        evaluators=row_evaluators(["goal_success"]),
        summary_evaluators=summary_evaluators(["goal_success"]),
    )

LangSmith reads a row evaluator's key from a literal ``"key"`` in its source; these keys are
built from the metric's name, so ``graphs.experiments.KeyedRunEvaluator`` wraps them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, NotRequired, TypedDict

from todeval.evals.metrics.agreement import cohen_kappa, paired
from todeval.evals.metrics.goal_success import success_rate as gs
from todeval.evals.metrics.goal_success.segmentation import boundary_prf, goal_spans
from todeval.evals.metrics.goal_success.teacher_agreement import labeller_agreement
from todeval.evals.metrics.record_metrics import METRICS, MetricInfo, Part, corpus_value
from todeval.evals.record_views import EvaluationRecord
from todeval.evals.subsystems import SUITES, applicable_suites


class Feedback(TypedDict):
    """What an evaluator returns: LangSmith's feedback key, score and an optional comment."""

    key: str
    score: float | None
    comment: NotRequired[str]


RowEvaluator = Callable[[dict[str, Any], dict[str, Any]], Feedback]
SummaryEvaluator = Callable[[list[dict[str, Any]], list[dict[str, Any]]], Feedback]


def evaluation_example(record: EvaluationRecord) -> dict[str, Any]:
    """A LangSmith example: the record as input; its id, kind, suites and gold turns as output."""
    return {
        "inputs": {"record": record.model_dump(mode="json")},
        "outputs": {
            "record_id": record.record_id,
            "kind": record.kind,
            "suites": list(applicable_suites(record)),
            "turns": [
                {
                    "turn_number": turn.turn_number,
                    "is_new_goal": turn.is_new_goal,
                    "quality": turn.quality,
                    "rcof": turn.rcof,
                }
                for turn in record.dialogue.turns
            ],
        },
    }


# --- every figure -----------------------------------------------------------------------------


def corpus_key(metric: str) -> str:
    """The feedback key of a metric's corpus figure (its summary evaluator's name)."""
    return f"{metric}_corpus"


def metric_evaluator(metric: str) -> RowEvaluator:
    """The row evaluator of ``metric``: this record's ``num / den``, feedback key ``metric``."""
    info = _info(metric)

    def evaluate(outputs: dict[str, Any], reference_outputs: dict[str, Any]) -> Feedback:
        part, missing = _part(outputs, metric)
        if part is None:
            return {"key": metric, "score": None, "comment": f"no score: {missing}"}
        return {
            "key": metric,
            "score": part["num"] / part["den"],
            "comment": f"{part['num']:g} / {part['den']:g}",
        }

    # LangSmith names the evaluator's traced run after the function.
    evaluate.__name__ = evaluate.__qualname__ = metric
    evaluate.__doc__ = f"This record's {info.label}: its part's numerator over its denominator."
    return evaluate


def corpus_evaluator(metric: str) -> SummaryEvaluator:
    """The summary evaluator of ``metric``: ``sum(num) / sum(den)`` over the experiment."""
    info = _info(metric)
    key = corpus_key(metric)

    def evaluate(
        outputs: list[dict[str, Any]], reference_outputs: list[dict[str, Any]]
    ) -> Feedback:
        parts = [part for output in outputs if (part := _part(output, metric)[0]) is not None]
        value = corpus_value(parts)
        comment = f"over {len(parts)} records of {len(outputs)}"
        if value is None:
            return {
                "key": key,
                "score": None,
                "comment": f"no score: no record has a part, {comment}",
            }
        num = sum(part["num"] for part in parts)
        den = sum(part["den"] for part in parts)
        return {"key": key, "score": value, "comment": f"{num:g} / {den:g} {comment}"}

    evaluate.__name__ = evaluate.__qualname__ = key
    evaluate.__doc__ = f"The corpus {info.label}: pooled numerators over pooled denominators."
    return evaluate


def suite_metrics(suites: Iterable[str] | None = None) -> list[str]:
    """The metrics of ``suites`` (default: every suite), in report order.

    Raises:
        ValueError: A suite that does not exist.
    """
    wanted = list(SUITES if suites is None else suites)
    unknown = sorted(set(wanted) - set(SUITES))
    if unknown:
        raise ValueError(f"unknown suite(s) {unknown}; expected some of {list(SUITES)}")
    return [name for name, info in METRICS.items() if info.suite in wanted]


def _info(metric: str) -> MetricInfo:
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; expected one of {list(METRICS)}")
    return METRICS[metric]


def _part(outputs: Mapping[str, Any] | None, metric: str) -> tuple[Part | None, str]:
    """The record's part of ``metric`` with a positive denominator, or why there is none."""
    if not outputs:
        return None, "the target returned no line for this record"
    raw = (outputs.get("metrics") or {}).get(metric)
    if raw is None:
        suite = METRICS[metric].suite
        if outputs.get("error"):
            return None, f"the record failed: {outputs['error']}"
        if suite not in (outputs.get("suites") or [suite]):
            return None, f"the {suite} suite did not run on this record"
        return None, f"the record has no part for {metric} (undefined for it)"
    try:
        num, den = float(raw["num"]), float(raw["den"])
    except (KeyError, TypeError, ValueError):
        return None, f"malformed part for {metric}: {raw!r}"
    if den <= 0:
        return None, f"the record's part for {metric} has denominator {den:g}"
    return {"num": num, "den": den}, ""


ROW_EVALUATORS: dict[str, RowEvaluator] = {name: metric_evaluator(name) for name in METRICS}
"""Metric name -> its row evaluator (function ``__name__`` = the metric)."""

SUMMARY_EVALUATORS: dict[str, SummaryEvaluator] = {name: corpus_evaluator(name) for name in METRICS}
"""Metric name -> its corpus evaluator (function ``__name__`` = ``<metric>_corpus``)."""


# --- goal success against gold turn labels ----------------------------------------------------


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


GOLD_ROW_EVALUATORS: list[RowEvaluator] = [
    turn_quality_accuracy,
    rcof_accuracy,
    rcof_coverage,
    segmentation_f1,
]
"""Goal-success rows against gold (run with the goal-success suite)."""

GOLD_SUMMARY_EVALUATORS: list[SummaryEvaluator] = [turn_quality_kappa, gold_gsr]
"""Goal-success corpus figures against gold."""


def row_evaluators(suites: Iterable[str] | None = None) -> list[RowEvaluator]:
    """One row evaluator per metric of ``suites`` (+ the gold ones with goal success)."""
    wanted = list(SUITES if suites is None else suites)
    gold = GOLD_ROW_EVALUATORS if "goal_success" in wanted else []
    return [ROW_EVALUATORS[name] for name in suite_metrics(wanted)] + gold


def summary_evaluators(suites: Iterable[str] | None = None) -> list[SummaryEvaluator]:
    """One corpus evaluator per metric of ``suites`` (+ the gold ones with goal success)."""
    wanted = list(SUITES if suites is None else suites)
    gold = GOLD_SUMMARY_EVALUATORS if "goal_success" in wanted else []
    return [SUMMARY_EVALUATORS[name] for name in suite_metrics(wanted)] + gold


def _feedback(key: str, score: float | None, comment: str) -> Feedback:
    return {
        "key": key,
        "score": score,
        "comment": comment if score is not None else f"no score: {comment}",
    }


def _goals(outputs: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    """The goal-success goal lines of a record's line."""
    return list(((outputs or {}).get("goal_success") or {}).get("goals") or [])


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
    voted = {int(t["turn_number"]): t for goal in _goals(outputs) for t in goal["turns"]}
    gold = _gold_turns(reference_outputs)
    missing: Mapping[str, Any] = {"quality": None, "rcof": None}
    labels = [voted.get(int(turn["turn_number"]), missing) for turn in gold]
    return labels, list(gold)


def _vote_agreement(
    outputs: Mapping[str, Any] | None, reference_outputs: Mapping[str, Any] | None
) -> dict[str, Any]:
    labels, references = _aligned(outputs, reference_outputs)
    return labeller_agreement(labels, references, ndigits=None)
