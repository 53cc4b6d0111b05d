"""The goal-success graph as a LangSmith experiment: the project's evaluators on a corpus.

``gsr_experiment(dialogues)`` runs ``langsmith.evaluate`` with the goal-success graph as the
target and :mod:`evals.langsmith_evaluators` as row and summary evaluators. Results are uploaded
(so experiments can be compared side by side in LangSmith) only when ``LANGSMITH_API_KEY`` is
set; otherwise the run stays local (``upload_results=False``) and nothing is sent.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, cast

import langsmith
from langsmith import Client, schemas
from langsmith.evaluation._runner import ExperimentResults

from evals.langsmith_evaluators import ROW_EVALUATORS, SUMMARY_EVALUATORS, dialogue_example
from evals.schema import Dialogue, routes_used
from graphs.context import Context
from graphs.goal_success import graph as goal_success_graph


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
