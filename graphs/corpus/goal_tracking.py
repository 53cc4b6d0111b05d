"""Goal tracking over a corpus (ATOD, paper 000, §5-8): the agentic memory goal tracker.

Each dialogue becomes a sequence of utterances run through the goal-tracking graph (one thread
per dialogue) and is scored against its gold when the input has it: dGCR, turns to completion,
goal detection F1 and status accuracy (final and over dialogue progress), memory recall,
per-turn latency and LLM tokens. Writes ``goals.jsonl``, ``summary.json`` and ``report.html``.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import islice
from pathlib import Path
from typing import Any, cast

from todeval.evals.datasets import detect_format
from todeval.evals.datasets.atod import looks_like_atod
from todeval.evals.datasets.errors import DatasetFormatError
from todeval.evals.datasets.goal_tracking import load_goal_tracking_records
from todeval.evals.datasets.sgd_schema import schema_beside
from todeval.evals.goal_tracking_schema import AtodDialogue
from todeval.evals.metrics.goal_tracking.tally import REPORT_TIMELINES, TrackedCorpusTally
from todeval.evals.record_views import EvaluationRecord, atod_utterances, tracker_utterances
from todeval.evals.report.goal_tracking import goal_tracking_section
from todeval.evals.schema import RecordError
from todeval.graphs.corpus.job import (
    CorpusJob,
    Progress,
    finish,
    no_progress,
    run_job,
    start_run,
)
from todeval.graphs.goal_tracking import (
    GoalTrackingTask,
    build_baseline_tracking_graph,
    build_goal_tracking_graph,
    run_goal_tracking,
)
from todeval.graphs.runner import context_summary
from todeval.graphs.suites import Branch, EvaluationSuite, Prepare
from todeval.nodes.context import Context
from todeval.nodes.goal_tracking.baselines.memory_views import METHODS
from todeval.nodes.goal_tracking.baselines.tracker import check_tracker
from todeval.nodes.goal_tracking.judges.goal_extraction import GoalExtractor
from todeval.nodes.goal_tracking.llm_steps import uses_llm
from todeval.nodes.goal_tracking.roles import goal_extractor
from todeval.nodes.goal_tracking.settings import GoalTrackingSettings
from todeval.nodes.goal_tracking.state import GoalTrackingOutput
from todeval.nodes.goal_tracking.tracker import prepare_dialogues, with_utterances
from todeval.nodes.judges.spec import parse_spec
from todeval.stores.paths import data_dir

SUBSYSTEM = "goal_tracking"
GOAL_TRACKERS = ("atod", *METHODS)
"""``Context.goal_tracker`` values: ATOD's tracker and the paper's baselines (Table 3)."""


def tracker_input(dialogue: AtodDialogue) -> dict[str, Any]:
    """The whole dialogue in one call, closing audit included (offline evaluation)."""
    return {
        "dialogue_id": dialogue.dialogue_id,
        "utterances": atod_utterances(dialogue),
        "final": True,
    }


def _is_sgd(source: Path, fmt: str) -> bool:
    if fmt != "auto":
        return fmt == "sgd"
    try:
        return not looks_like_atod(source) and detect_format(source) == "sgd"
    except DatasetFormatError:
        return False


def synthesis_schema(source: Path) -> Path | None:
    """The schema of the SGD file a synthetic ATOD set was drawn from, when it is at hand.

    A set written by ``todeval synthesize atod`` names its source file in every dialogue's
    ``metadata.source``; its goals are named by that schema's services, so tracking with the
    same schema is what makes goal detection comparable with the gold.
    """
    for record in load_goal_tracking_records(source, "atod", None):
        if isinstance(record, RecordError):
            continue
        name = record.metadata.get("source")
        if not isinstance(name, str) or not name:
            return None
        for candidate in (Path(name), data_dir() / "sgd" / Path(name).name):
            if candidate.is_file():
                return schema_beside(candidate)
        return None
    return None


def _is_atod(source: Path, fmt: str) -> bool:
    return fmt == "atod" or (fmt == "auto" and looks_like_atod(source))


def goal_tracking_judges(context: Context) -> dict[str, Any]:
    """Who tracked and judged a goal-tracking run."""
    return {
        "tracker": GoalTrackingSettings.of(context).tracker,
        "goal_extraction": context.spec("goal_extraction"),
        "proactivity": context.spec("proactivity"),
        "response_quality": context.spec("response_quality"),
        "others": "local",
    }


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
        ValueError: ``Context.goal_tracker`` is neither ``atod`` nor a baseline.

    Returns:
        The summary (as written to ``summary.json``).
    """
    if context.schema_path is None and _is_sgd(source, fmt):
        found = schema_beside(source)
        if found is not None:  # goals named as SGD's gold names them
            context = context.updated(schema_path=str(found))
    elif context.schema_path is None and _is_atod(source, fmt):
        found = synthesis_schema(source)
        if found is not None:  # a synthetic set: the schema of the SGD file it came from
            context = context.updated(schema_path=str(found))
    baseline = GoalTrackingSettings.of(context).tracker != "atod"
    if baseline:
        check_tracker(GoalTrackingSettings.of(context).tracker)
    start_run(context)
    if parse_spec(context.spec("goal_extraction")).is_local:  # an LLM spec sends the prompts
        goal_extractor(context.spec("goal_extraction"), context.schema_path)
    records = load_goal_tracking_records(source, fmt, context.schema_path)
    # Proactivity and response quality are judged in the graph (judge_dialogue).
    tally = TrackedCorpusTally(named_by_schema=context.schema_path is not None)
    job = CorpusJob(
        subsystem=SUBSYSTEM,
        graph=build_baseline_tracking_graph() if baseline else build_goal_tracking_graph(),
        records=islice(records, limit),
        make_input=tracker_input,
        output_keys=GoalTrackingOutput.__annotations__,
        tally=tally,
        lines_file="goals.jsonl",
    )
    stats = run_job(job, context, out=out, checkpoints=checkpoints, progress=progress)
    summary = (
        tally.summary(goal_tracking_judges(context))
        | {
            "subsystem": SUBSYSTEM,
            "run": {"input": str(source), "context": context_summary(context)},
        }
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
            "judge": context.spec("goal_extraction"),
        },
    )
    return summary


def judges_with_llm(context: Context) -> bool:
    """Whether the proactivity or response-quality judge is an LLM (its branch then waits)."""
    specs = (context.spec("proactivity"), context.spec("response_quality"))
    return not all(parse_spec(spec).is_local for spec in specs)


def local_extractor(context: Context) -> GoalExtractor | None:
    """The local goal extractor (loads its model); None for an LLM spec, which sends prompts."""
    if not parse_spec(context.spec("goal_extraction")).is_local:
        return None
    return goal_extractor(context.spec("goal_extraction"), context.schema_path)


def _check_goal_tracking_judges(context: Context) -> None:
    local_extractor(context)
    if GoalTrackingSettings.of(context).tracker != "atod":
        check_tracker(GoalTrackingSettings.of(context).tracker)


def _prepare(context: Context) -> Prepare:
    """The local goal extractor's batch work for a chunk (see :func:`prepare_dialogues`).

    It embeds the chunk's utterances in one batch; with ATOD's tracker it also scores each
    dialogue's utterances ahead of the tracker, and the goal memory embeds the chunk's goal
    descriptions in one batch.
    """
    extractor = local_extractor(context)
    atod = GoalTrackingSettings.of(context).tracker == "atod"

    def prepare(records: Sequence[EvaluationRecord]) -> None:
        if extractor is None:
            return
        histories = [with_utterances([], tracker_utterances(record)) for record in records]
        extractor.prepare([str(u["text"]) for history in histories for u in history])
        if atod:
            prepare_dialogues(context, histories)

    return prepare


EVALUATION = EvaluationSuite(
    run=cast(Branch, run_goal_tracking),
    task_schema=GoalTrackingTask,
    judges=goal_tracking_judges,
    roles=("goal_extraction", "proactivity", "response_quality"),
    check=_check_goal_tracking_judges,
    computes_only=lambda context: not uses_llm(context) and not judges_with_llm(context),
    prepare=_prepare,
)
"""Goal tracking in ``todeval evaluate`` (its registry line names this)."""
