"""todeval's evaluation as a LangSmith experiment: the evaluation graph and todeval's evaluators.

``evaluation_experiment(records)`` runs ``langsmith.evaluate`` with the top-level evaluation
graph as the target, each record's ``results.jsonl`` line (the same line ``todeval evaluate``
writes) as its output, and :mod:`evals.langsmith_evaluators` as row and summary evaluators.
Results are uploaded (so experiments can be compared side by side in LangSmith) only when
``LANGSMITH_API_KEY`` is set; otherwise the run stays local (``upload_results=False``) and nothing
is sent.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import uuid
from collections.abc import Callable, Mapping, Sequence
from itertools import islice
from pathlib import Path
from typing import Any, cast

import langsmith
from langsmith import Client, schemas
from langsmith.evaluation._runner import ExperimentResults
from langsmith.evaluation.evaluator import DynamicRunEvaluator

from todeval.evals.datasets.errors import DatasetFormatError
from todeval.evals.datasets.tau2 import load_goal_shift_run
from todeval.evals.goal_shift_schema import Conversation
from todeval.evals.langsmith_evaluators import (
    RowEvaluator,
    evaluation_example,
    row_evaluators,
    suite_metrics,
    summary_evaluators,
)
from todeval.evals.metrics.evaluation import EvaluationTally
from todeval.evals.metrics.simulation.tally import SimulationRecord, results_file, simulation_entry
from todeval.evals.metrics.suite_tally import TallySettings
from todeval.evals.outputs import write_json
from todeval.evals.record_views import EvaluationRecord, conversation_record
from todeval.evals.results import ThreadResult
from todeval.evals.schema import RecordError, routes_used
from todeval.evals.subsystems import SUITES, Suite, start_tallies, suite_named
from todeval.graphs.corpus.evaluation import (
    check_judges,
    corpus_records,
    detect_kinds,
    evaluation_judges,
    run_context,
)
from todeval.graphs.corpus.simulation import domain_tasks, simulation_records
from todeval.graphs.evaluation import graph as evaluation_graph
from todeval.graphs.simulation import build_simulation_graph
from todeval.nodes.context import Context
from todeval.nodes.goal_success.settings import GoalSuccessSettings
from todeval.nodes.memory.bank import bank_for
from todeval.nodes.simulation.settings import SimulationSettings


def offline_client() -> Client:
    """A client that never contacts a server (no tracing thread, server info given up front)."""
    return Client(api_url="http://127.0.0.1:9", api_key="unused", auto_batch_tracing=False, info={})


def evaluation_experiment(
    records: Sequence[EvaluationRecord],
    *,
    context: Context | None = None,
    suites: Sequence[str] | None = None,
    client: Client | None = None,
    upload_results: bool | None = None,
    experiment_prefix: str = "todeval-evaluation",
    dataset_name: str | None = None,
) -> ExperimentResults:
    """Evaluate ``records`` with the top-level evaluation graph as a LangSmith experiment.

    Each record's run returns its ``results.jsonl`` line (built by the same tally as
    ``todeval evaluate``); one row evaluator per metric scores the record's own value and one
    summary evaluator per metric the corpus figure (``<metric>_corpus``, what ``summary.json``
    reports), see :mod:`evals.langsmith_evaluators`. With the goal-success suite, records with
    gold turn labels are also scored against them.

    Args:
        records: The corpus (``load_evaluation_records``).
        context: Judges and thresholds. Escalation is switched off: an experiment has no human
            to ask, so ambiguous turns stay unlabelled.
        suites: The suites to run where they apply (default: all); only their metrics are
            scored. Short names (``gsr``, ``goals``, ``shift``) are accepted.
        client: A LangSmith client; default: the environment's when uploading, else offline.
        upload_results: Upload to LangSmith; default: when ``LANGSMITH_API_KEY`` is set.
        experiment_prefix: Name prefix of the experiment in LangSmith.
        dataset_name: When uploading, the LangSmith dataset that holds the records as examples
            (created if absent, each record added once), so experiments on the same records
            line up in LangSmith's comparison view. Default: :func:`corpus_dataset_name`, the
            same for the same records. Offline the examples exist only in this experiment.

    Raises:
        ValueError: An unknown suite.
    """
    upload = bool(os.environ.get("LANGSMITH_API_KEY")) if upload_results is None else upload_results
    wanted = [suite_named(name) or name for name in (suites or SUITES)]
    metrics = suite_metrics(wanted)  # raises on an unknown suite before any work
    run_context = context or Context()
    routes = GoalSuccessSettings.of(run_context).routes or routes_used(
        record.dialogue for record in records
    )
    run_context = run_context.updated(
        settings={"goal_success": {"escalate_ambiguous": False, "routes": routes}}
    )
    tally = EvaluationTally(
        evaluation_judges(run_context),
        start_tallies(TallySettings(units=bank_for(run_context).units)),
    )

    def target(inputs: dict[str, Any]) -> dict[str, Any]:
        record = EvaluationRecord.model_validate(inputs["record"])
        # Offline, langsmith traces the target "locally", but LangChain's tracer inside the
        # graph would still post each run to the client; keep the graph untraced then.
        with langsmith.tracing_context(enabled=upload):
            output: dict[str, Any] = evaluation_graph.invoke(
                {"record": inputs["record"], "suites": wanted}, context=run_context
            )
        result = ThreadResult(record.record_id, record.record_id, output)
        return tally.line_for(record, result)

    return run_experiment(
        target,
        [evaluation_example(record) for record in records],
        suites=wanted,
        client=client,
        upload=upload,
        experiment_prefix=experiment_prefix,
        dataset_name=dataset_name,
        metadata={
            "suites": wanted,
            "metrics": metrics,
            "segmentation": run_context.spec("segmentation"),
            "turn_quality": run_context.specs("turn_quality"),
        },
    )


def run_experiment(
    target: Callable[[dict[str, Any]], dict[str, Any]],
    examples: Sequence[Mapping[str, Any]],
    *,
    suites: Sequence[str],
    client: Client | None,
    upload: bool,
    experiment_prefix: str,
    dataset_name: str | None,
    metadata: Mapping[str, Any],
) -> ExperimentResults:
    """``langsmith.evaluate`` of ``target`` over ``examples`` with the suites' evaluators.

    Uploading, the examples go to a dataset (named by their content unless given) so
    experiments on the same examples line up; offline they exist only in this experiment.
    """
    run_client = client or (Client() if upload else offline_client())
    if upload:
        name = dataset_name or corpus_dataset_name(examples)
        rows = dataset_examples(run_client, name, examples)
    else:
        dataset_id = uuid.uuid4()
        rows = [
            schemas.Example(id=uuid.uuid4(), dataset_id=dataset_id, **example)
            for example in examples
        ]
    return langsmith.evaluate(
        target,
        data=cast(Any, rows),
        evaluators=[KeyedRunEvaluator(evaluator) for evaluator in row_evaluators(suites)],
        summary_evaluators=cast(Any, summary_evaluators(suites)),
        client=run_client,
        upload_results=upload,
        experiment_prefix=experiment_prefix,
        metadata=dict(metadata),
    )


class KeyedRunEvaluator(DynamicRunEvaluator):
    """A row evaluator whose feedback key is its function's ``__name__``.

    LangSmith reads an evaluator's keys from the literal ``"key"`` in its source, for the
    experiment's progress view and for the feedback it logs when the evaluator raises; a key
    built from the metric's name is not literal, so it would be reported as ``evaluate``.
    """

    def __init__(self, evaluator: RowEvaluator) -> None:
        """Wrap ``evaluator`` (see :mod:`evals.langsmith_evaluators`)."""
        super().__init__(cast(Any, evaluator))
        self.key = evaluator.__name__

    @property
    def feedback_keys(self) -> list[str]:
        """The metric's name."""
        return [self.key]


def dataset_examples(
    client: Client, dataset_name: str, wanted: Sequence[Mapping[str, Any]]
) -> list[schemas.Example]:
    """Examples (``{"inputs", "outputs"}``) in the dataset ``dataset_name``, new ones uploaded.

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


def corpus_dataset_name(examples: Sequence[Mapping[str, Any]]) -> str:
    """A dataset name that is the same for the same examples: their count and a content hash."""
    digest = hashlib.sha256()
    for example in examples:
        digest.update(_fingerprint(example).encode())
    return f"todeval-{len(examples)}-records-{digest.hexdigest()[:12]}"


def _fingerprint(example: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(example, sort_keys=True).encode()).hexdigest()


def corpus_experiment(
    sources: Sequence[Path],
    context: Context,
    *,
    suites: Sequence[Suite] = SUITES,
    limit: int | None = None,
    experiment_prefix: str = "todeval-evaluation",
    dataset_name: str | None = None,
) -> tuple[ExperimentResults, int]:
    """:func:`evaluation_experiment` over input files, set up as ``todeval evaluate`` does.

    Returns:
        The experiment and how many records it ran (unreadable records are left out).

    Raises:
        DatasetFormatError, JudgeSpecError, JudgeConfigError: as :func:`evaluate_corpus`.
    """
    inputs = list(zip(sources, detect_kinds(sources), strict=True))
    context = run_context(context, inputs, limit).updated(
        settings={"goal_success": {"escalate_ambiguous": False}}
    )
    check_judges(context, suites)
    records = [
        r
        for r in islice(corpus_records(inputs, context.schema_path, None), limit)
        if isinstance(r, EvaluationRecord)
    ]
    results = evaluation_experiment(
        records,
        context=context,
        suites=suites,
        experiment_prefix=experiment_prefix,
        dataset_name=dataset_name,
    )
    return results, len(records)


def corpus_scores(results: ExperimentResults) -> dict[str, float | None]:
    """The summary evaluators' scores, by feedback key (after every row has finished)."""
    for _ in results:  # the summary is computed once the rows are consumed
        pass
    summary: Any = results._summary_results or {"results": []}  # langsmith keeps it private
    return {feedback.key: feedback.score for feedback in summary["results"]}


def simulation_experiment(
    domain: str,
    context: Context,
    *,
    trials: int = 1,
    task_ids: Sequence[str] | None = None,
    seed: int = 300,
    client: Client | None = None,
    upload_results: bool | None = None,
    experiment_prefix: str = "todeval-simulation",
    dataset_name: str | None = None,
) -> tuple[ExperimentResults, int]:
    """A live simulation as a LangSmith experiment: the agent under test is the target.

    Each example is a (task, trial); the target runs the simulation graph (the agent in
    ``SimulationSettings.agent`` against the simulated user and the domain's tools) and scores
    the conversation with the goal-shift suite, as ``todeval simulate`` does, so two agents on
    the same tasks line up in LangSmith's comparison view. Offline without an API key.

    Returns:
        The experiment and how many conversations it ran.
    """
    upload = bool(os.environ.get("LANGSMITH_API_KEY")) if upload_results is None else upload_results
    tasks = domain_tasks(domain)
    records = [
        r
        for r in simulation_records(domain, tasks, trials=trials, task_ids=task_ids, seed=seed)
        if isinstance(r, SimulationRecord)
    ]
    simulation = build_simulation_graph().compile()
    tally = EvaluationTally(evaluation_judges(context), start_tallies(TallySettings()))

    def target(inputs: dict[str, Any]) -> dict[str, Any]:
        record = SimulationRecord.model_validate(inputs["record"])
        with langsmith.tracing_context(enabled=upload):
            values = simulation.invoke(
                {
                    "domain": domain,
                    "task": record.task,
                    "trial": record.trial,
                    "seed": record.seed,
                },  # fmt: skip
                context=context,
            )
            conversation = conversation_record(as_conversation(record, dict(values), domain))
            output: dict[str, Any] = evaluation_graph.invoke(
                {"record": conversation.model_dump(mode="json"), "suites": ["goal_shift"]},
                context=context,
            )
        result = ThreadResult(record.eval_id, record.eval_id, output)
        return tally.line_for(conversation, result)

    examples = [{"inputs": {"record": r.model_dump(mode="json")}, "outputs": {}} for r in records]
    results = run_experiment(
        target,
        examples,
        suites=["goal_shift"],
        client=client,
        upload=upload,
        experiment_prefix=experiment_prefix,
        dataset_name=dataset_name,
        metadata={
            "domain": domain,
            "agent": SimulationSettings.of(context).agent,
            "user_simulator": context.spec("user_simulator"),
            "trials": trials,
        },  # fmt: skip
    )
    return results, len(records)


def as_conversation(record: SimulationRecord, values: dict[str, Any], domain: str) -> Conversation:
    """A finished simulation as the goal-shift loader reads it from a results file.

    Raises:
        DatasetFormatError: The conversation cannot be read (a malformed agent message).
    """
    entry = simulation_entry(record, values)
    with tempfile.TemporaryDirectory(prefix="todeval-simulation-") as folder:
        path = Path(folder) / "results.json"
        write_json(path, results_file([record.task], [entry], {"domain": domain}))
        [loaded] = load_goal_shift_run(path, domain=domain).records
    if isinstance(loaded, RecordError):
        raise DatasetFormatError(str(loaded))
    return loaded
