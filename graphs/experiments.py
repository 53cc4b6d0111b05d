"""The project's graphs as LangSmith experiments: the project's evaluators on a corpus.

``gsr_experiment(dialogues)`` runs ``langsmith.evaluate`` with the goal-success graph as the
target and :mod:`evals.langsmith_evaluators` as row and summary evaluators.
``evaluation_experiment(records)`` runs the top-level evaluation graph and scores every figure
``todeval evaluate`` reports with :mod:`evals.langsmith_suite_evaluators`. Results are uploaded
(so experiments can be compared side by side in LangSmith) only when ``LANGSMITH_API_KEY`` is
set; otherwise the run stays local (``upload_results=False``) and nothing is sent.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, cast

import langsmith
from langsmith import Client, schemas
from langsmith.evaluation._runner import ExperimentResults
from langsmith.evaluation.evaluator import DynamicRunEvaluator

from evals.langsmith_evaluators import (
    ROW_EVALUATORS,
    SUMMARY_EVALUATORS,
    RowEvaluator,
    dialogue_example,
)
from evals.langsmith_suite_evaluators import (
    evaluation_example,
    row_evaluators,
    suite_metrics,
    summary_evaluators,
)
from evals.metrics.record_metrics import record_parts
from evals.record_views import SUITES, EvaluationRecord
from evals.schema import Dialogue, routes_used
from graphs.evaluation import graph as evaluation_graph
from graphs.goal_success import graph as goal_success_graph
from nodes.context import Context

FALLBACK_SUITES = ("gsr", "shift")
"""The suites whose metrics :func:`fallback_line` reads off the graph's output alone."""

LineBuilder = Callable[[EvaluationRecord, dict[str, Any]], dict[str, Any]]
"""(record, evaluation graph output) -> the record's ``results.jsonl`` line with ``metrics``."""


def offline_client() -> Client:
    """A client that never contacts a server (no tracing thread, server info given up front)."""
    return Client(api_url="http://127.0.0.1:9", api_key="unused", auto_batch_tracing=False, info={})


def gsr_experiment(
    dialogues: Sequence[Dialogue],
    *,
    context: Context | None = None,
    client: Client | None = None,
    upload_results: bool | None = None,
    experiment_prefix: str = "todeval-gsr",
) -> ExperimentResults:
    """Evaluate ``dialogues`` with the goal-success graph as a LangSmith experiment.

    Args:
        dialogues: The corpus; gold ``is_new_goal``/``quality``/``rcof`` become the reference.
        context: Judges and thresholds. Escalation is switched off: an experiment has no human
            to ask, so ambiguous turns stay unlabelled.
        client: A LangSmith client; default: the environment's when uploading, else offline.
        upload_results: Upload to LangSmith; default: when ``LANGSMITH_API_KEY`` is set.
        experiment_prefix: Name prefix of the experiment in LangSmith.
    """
    upload = bool(os.environ.get("LANGSMITH_API_KEY")) if upload_results is None else upload_results
    run_context = context or Context()
    routes = run_context.routes or routes_used(dialogues)
    run_context = replace(run_context, escalate_ambiguous=False, routes=routes)

    def target(inputs: dict[str, Any]) -> dict[str, Any]:
        # Offline, langsmith traces the target "locally", but LangChain's tracer inside the
        # graph would still post each run to the client; keep the graph untraced then.
        with langsmith.tracing_context(enabled=upload):
            output: dict[str, Any] = goal_success_graph.invoke(inputs, context=run_context)
        return output

    examples: Any = [
        schemas.Example(id=uuid.uuid4(), dataset_id=uuid.uuid4(), **dialogue_example(d))
        for d in dialogues
    ]
    return langsmith.evaluate(
        target,
        data=examples,
        # langsmith's annotations predate its (outputs, reference_outputs) evaluator form.
        evaluators=cast(Any, ROW_EVALUATORS),
        summary_evaluators=cast(Any, SUMMARY_EVALUATORS),
        client=client or (Client() if upload else offline_client()),
        upload_results=upload,
        experiment_prefix=experiment_prefix,
        metadata={"segmenter": run_context.segmentation_judge, "teachers": run_context.teachers},
    )


def evaluation_experiment(
    records: Sequence[EvaluationRecord],
    *,
    context: Context | None = None,
    suites: Sequence[str] | None = None,
    client: Client | None = None,
    upload_results: bool | None = None,
    experiment_prefix: str = "todeval-evaluation",
    to_line: LineBuilder | None = None,
    dataset_name: str | None = None,
) -> ExperimentResults:
    """Evaluate ``records`` with the top-level evaluation graph as a LangSmith experiment.

    Each record's run returns its ``results.jsonl`` line; one row evaluator per metric scores the
    record's own value and one summary evaluator per metric the corpus figure (``<metric>_corpus``,
    what ``summary.json`` reports), see :mod:`evals.langsmith_suite_evaluators`.

    Args:
        records: The corpus (``load_evaluation_records``).
        context: Judges and thresholds. Escalation is switched off: an experiment has no human
            to ask, so ambiguous turns stay unlabelled.
        suites: The suites to run where they apply (default: all); only their metrics are
            scored. Without ``to_line`` only the GSR and goal-shift suites run.
        client: A LangSmith client; default: the environment's when uploading, else offline.
        upload_results: Upload to LangSmith; default: when ``LANGSMITH_API_KEY`` is set.
        experiment_prefix: Name prefix of the experiment in LangSmith.
        to_line: Builds the line from the record and the graph's output, e.g. the CLI's line
            builder, so the experiment scores exactly the lines ``todeval evaluate`` writes.
            Default: :func:`fallback_line`, which has only the GSR and goal-shift metrics.
        dataset_name: When uploading, the LangSmith dataset that holds the records as examples
            (created if absent, each record added once), so experiments on the same records
            line up in LangSmith's comparison view. Default: :func:`corpus_dataset_name`, the
            same for the same records. Offline the examples exist only in this experiment.

    Raises:
        ValueError: An unknown suite, or only suites the fallback line cannot score.
    """
    upload = bool(os.environ.get("LANGSMITH_API_KEY")) if upload_results is None else upload_results
    wanted = list(suites or SUITES)
    suite_metrics(wanted)  # raises on an unknown suite before any work
    if to_line is None:  # score (and run) only what the fallback line can compute
        wanted = [suite for suite in wanted if suite in FALLBACK_SUITES]
        if not wanted:
            raise ValueError(
                f"suites {list(suites or [])} need the CLI's line builder as to_line; "
                f"without it only {list(FALLBACK_SUITES)} can be scored"
            )
    metrics = suite_metrics(wanted)
    run_context = context or Context()
    routes = run_context.routes or routes_used(record.dialogue for record in records)
    run_context = replace(run_context, escalate_ambiguous=False, routes=routes)
    build_line = to_line or fallback_line

    def target(inputs: dict[str, Any]) -> dict[str, Any]:
        record = EvaluationRecord.model_validate(inputs["record"])
        # As in gsr_experiment: offline, keep LangChain's tracer inside the graph quiet.
        with langsmith.tracing_context(enabled=upload):
            output: dict[str, Any] = evaluation_graph.invoke(
                {"record": inputs["record"], "suites": wanted}, context=run_context
            )
        return build_line(record, output)

    run_client = client or (Client() if upload else offline_client())
    if upload:
        name = dataset_name or corpus_dataset_name(records)
        examples = dataset_examples(run_client, name, records)
    else:
        dataset_id = uuid.uuid4()
        examples = [
            schemas.Example(id=uuid.uuid4(), dataset_id=dataset_id, **evaluation_example(record))
            for record in records
        ]
    return langsmith.evaluate(
        target,
        data=cast(Any, examples),
        evaluators=[KeyedRunEvaluator(evaluator) for evaluator in row_evaluators(wanted)],
        summary_evaluators=cast(Any, summary_evaluators(wanted)),
        client=run_client,
        upload_results=upload,
        experiment_prefix=experiment_prefix,
        metadata={
            "suites": wanted,
            "metrics": metrics,
            "segmenter": run_context.segmentation_judge,
            "teachers": run_context.teachers,
            "line_builder": getattr(build_line, "__qualname__", repr(build_line)),
        },
    )


class KeyedRunEvaluator(DynamicRunEvaluator):
    """A row evaluator whose feedback key is its function's ``__name__``.

    LangSmith reads an evaluator's keys from the literal ``"key"`` in its source, for the
    experiment's progress view and for the feedback it logs when the evaluator raises; a key
    built from the metric's name is not literal, so it would be reported as ``evaluate``.
    """

    def __init__(self, evaluator: RowEvaluator) -> None:
        """Wrap ``evaluator`` (see :mod:`evals.langsmith_suite_evaluators`)."""
        super().__init__(cast(Any, evaluator))
        self.key = evaluator.__name__

    @property
    def feedback_keys(self) -> list[str]:
        """The metric's name."""
        return [self.key]


def fallback_line(record: EvaluationRecord, output: Mapping[str, Any]) -> dict[str, Any]:
    """A record's line without the CLI: its id, kind, suites and the metrics the graph gives.

    Only GSR (from the goal-success output's goals) and the goal-shift figures (from the
    goal-shift output) can be read off the graph's output alone. The goal-tracking figures need
    the CLI's tally against the record's gold goals and the memory figures the CLI's item line,
    so they are left out here: pass the CLI's line builder as ``to_line`` to score them.
    """
    results: Mapping[str, Any] = output.get("results") or {}
    readable = {suite: results[suite] for suite in FALLBACK_SUITES if suite in results}
    return {
        "record_id": output.get("record_id", record.record_id),
        "kind": record.kind,
        "suites": list(output.get("suites") or []),
        "status": "done",
        "error": None,
        "metrics": record_parts(readable),
    }


def dataset_examples(
    client: Client, dataset_name: str, records: Sequence[EvaluationRecord]
) -> list[schemas.Example]:
    """The records as examples of the LangSmith dataset ``dataset_name``, uploading new ones.

    An example's id is derived from the dataset and the example's content, so the same record
    maps to the same example in every run (experiments compare on it) and an edited record
    becomes a new example instead of silently changing an old one.
    """
    if client.has_dataset(dataset_name=dataset_name):
        dataset = client.read_dataset(dataset_name=dataset_name)
    else:
        dataset = client.create_dataset(
            dataset_name, description="todeval evaluation records (inputs: one record each)"
        )
    wanted = [evaluation_example(record) for record in records]
    ids = [uuid.uuid5(dataset.id, _fingerprint(example)) for example in wanted]
    present = {example.id for example in client.list_examples(dataset_id=dataset.id)}
    missing = {  # keyed by id: a record given twice is one example
        example_id: {
            "id": example_id,
            "inputs": example["inputs"],
            "reference_outputs": example["outputs"],
        }
        for example_id, example in zip(ids, wanted, strict=True)
        if example_id not in present
    }
    if missing:
        client.create_examples(dataset_id=dataset.id, examples=cast(Any, list(missing.values())))
    return [
        schemas.Example(id=example_id, dataset_id=dataset.id, **example)
        for example_id, example in zip(ids, wanted, strict=True)
    ]


def corpus_dataset_name(records: Sequence[EvaluationRecord]) -> str:
    """A dataset name that is the same for the same records: their count and a content hash."""
    digest = hashlib.sha256()
    for record in records:
        digest.update(_fingerprint(evaluation_example(record)).encode())
    return f"todeval-{len(records)}-records-{digest.hexdigest()[:12]}"


def _fingerprint(example: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(example, sort_keys=True).encode()).hexdigest()
