"""Goal tracking over a corpus (ATOD, paper 000, §5-8): the agentic memory goal tracker.

Each dialogue becomes a sequence of utterances run through the goal-tracking graph (one thread
per dialogue) and is scored against its gold when the input has it: dGCR, turns to completion,
goal detection F1 and status accuracy (final and over dialogue progress), memory recall,
per-turn latency and LLM tokens. Writes ``goals.jsonl``, ``summary.json`` and ``report.html``.
"""

from __future__ import annotations

from dataclasses import asdict, replace
from itertools import islice
from pathlib import Path
from typing import Any

from evals.datasets import detect_format
from evals.datasets.atod import looks_like_atod
from evals.datasets.errors import DatasetFormatError
from evals.datasets.goal_tracking import load_goal_tracking_records
from evals.datasets.sgd_schema import schema_beside
from evals.goal_tracking_schema import AtodDialogue
from evals.metrics.goal_tracking.tally import REPORT_TIMELINES, TrackedCorpusTally
from evals.report.goal_tracking import goal_tracking_section
from graphs.corpus.job import (
    CorpusJob,
    Progress,
    finish,
    no_progress,
    run_job,
    start_run,
)
from graphs.goal_tracking import build_goal_tracking_graph
from nodes.context import Context
from nodes.goal_tracking.judges.goal_extraction import goal_extractor
from nodes.goal_tracking.state import GoalTrackingOutput

SUBSYSTEM = "goal_tracking"


def tracker_input(dialogue: AtodDialogue) -> dict[str, Any]:
    """The whole dialogue in one call, closing audit included (offline evaluation)."""
    return {
        "dialogue_id": dialogue.dialogue_id,
        "utterances": [{"speaker": t.speaker, "text": t.utterance} for t in dialogue.turns],
        "final": True,
    }


def _is_sgd(source: Path, fmt: str) -> bool:
    if fmt != "auto":
        return fmt == "sgd"
    try:
        return not looks_like_atod(source) and detect_format(source) == "sgd"
    except DatasetFormatError:
        return False


def goal_tracking_judges(context: Context) -> dict[str, Any]:
    """Who judged a goal-tracking run."""
    return {"goal_extraction": context.goal_extraction_judge, "others": "local"}


def goal_tracking_corpus(
    source: Path,
    fmt: str,
    context: Context,
    *,
    out: Path,
    checkpoints: str | None = None,
    limit: int | None = None,
    progress: Progress = no_progress,
) -> dict[str, Any]:
    """Track every dialogue of ``source``; write goals, summary and report.

    Raises:
        JudgeSpecError, JudgeConfigError: The goal-extraction spec is unknown or unusable.
        DatasetFormatError: The input or the schema cannot be read.

    Returns:
        The summary (as written to ``summary.json``).
    """
    if context.schema_path is None and _is_sgd(source, fmt):
        found = schema_beside(source)
        if found is not None:  # goals named as SGD's gold names them
            context = replace(context, schema_path=str(found))
    start_run(context)
    goal_extractor(context.goal_extraction_judge, context.schema_path)
    records = load_goal_tracking_records(source, fmt, context.schema_path)
    tally = TrackedCorpusTally(named_by_schema=context.schema_path is not None)
    job = CorpusJob(
        subsystem=SUBSYSTEM,
        graph=build_goal_tracking_graph(),
        records=islice(records, limit),
        make_input=tracker_input,
        output_keys=GoalTrackingOutput.__annotations__,
        tally=tally,
        lines_file="goals.jsonl",
    )
    stats = run_job(job, context, out=out, checkpoints=checkpoints, progress=progress)
    summary = (
        tally.summary(goal_tracking_judges(context))
        | {"subsystem": SUBSYSTEM, "run": {"input": str(source), "context": asdict(context)}}
        | stats.details()
    )
    finish(
        out,
        summary,
        stats,
        title="todeval: goal tracking",
        sections=[goal_tracking_section(summary, tally.shown, max_timelines=REPORT_TIMELINES)],
        meta={
            "input": str(source),
            "schema": context.schema_path or "none",
            "judge": context.goal_extraction_judge,
        },
    )
    return summary
