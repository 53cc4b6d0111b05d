"""Every figure of ``todeval evaluate`` as a LangSmith evaluator, so experiments can be compared.

The target of the experiment returns a record's ``results.jsonl`` line (see
:mod:`evals.metrics.record_metrics`): its ``metrics`` hold the record's share of each corpus
figure as a :class:`~evals.metrics.record_metrics.Part` ``{"num", "den"}``. For every metric in
:data:`~evals.metrics.record_metrics.METRICS` there is

- a row evaluator named after the metric (``gsr``, ``tsr``, ...) scoring the record's own
  value ``num / den``, or ``None`` with a comment when the record has no part for it (the suite
  did not run, the figure was undefined for it, or the target failed), so LangSmith's mean is
  over the records that have one;
- a summary evaluator named ``<metric>_corpus`` scoring the corpus figure ``sum(num) /
  sum(den)`` over the experiment's records, which is what ``summary.json`` reports. It differs
  from the mean of the row scores whenever records weigh differently (GSR pools goals).

Use them with ``langsmith.evaluate``::

    langsmith.evaluate(
        target,  # inputs {"record": ...} -> a results.jsonl line with "metrics"
        data=[evaluation_example(record) for record in records],  # as Examples or a dataset
        evaluators=row_evaluators(["gsr", "shift"]),
        summary_evaluators=summary_evaluators(["gsr", "shift"]),
    )

LangSmith reads a row evaluator's feedback key from a literal ``"key"`` in its source (for its
progress view and for the feedback it logs when an evaluator raises); these keys are built from
the metric's name, so ``graphs.experiments.KeyedRunEvaluator`` wraps them to report it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from evals.langsmith_evaluators import Feedback, RowEvaluator, SummaryEvaluator
from evals.metrics.record_metrics import METRICS, MetricInfo, Part, corpus_value
from evals.record_views import SUITES, EvaluationRecord, applicable_suites


def evaluation_example(record: EvaluationRecord) -> dict[str, Any]:
    """A LangSmith example for a record: the record as input, what it is and may run as output.

    Returns:
        ``{"inputs": {"record": <JSON dict>}, "outputs": {"record_id", "kind", "suites"}}``
        where ``suites`` are the suites that apply to the record; ready for
        ``Client.create_examples`` or ``langsmith.schemas.Example(**...)``.
    """
    return {
        "inputs": {"record": record.model_dump(mode="json")},
        "outputs": {
            "record_id": record.record_id,
            "kind": record.kind,
            "suites": list(applicable_suites(record)),
        },
    }


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


def row_evaluators(suites: Iterable[str] | None = None) -> list[RowEvaluator]:
    """One row evaluator per metric of ``suites``, for ``evaluate(..., evaluators=...)``."""
    return [ROW_EVALUATORS[name] for name in suite_metrics(suites)]


def summary_evaluators(suites: Iterable[str] | None = None) -> list[SummaryEvaluator]:
    """One corpus evaluator per metric of ``suites``, for ``summary_evaluators=...``."""
    return [SUMMARY_EVALUATORS[name] for name in suite_metrics(suites)]


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
