"""Goal success over a corpus (paper 004): Goal Success Rate and root causes, or segmentation.

:func:`goal_success_corpus` runs the goal-success graph on every dialogue and writes
``goals.jsonl`` (one line per goal), ``summary.json`` and ``report.html``; turns the teachers split
on pause their thread for a human (``todeval review`` answers them and calls it again).
:func:`segmentation_corpus` runs the goal-segmentation graph alone and writes
``segments.jsonl`` and ``summary.json``, with boundary P/R/F1, Pk and WindowDiff against gold.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import islice
from pathlib import Path
from typing import Any, cast

from todeval.evals.datasets import load_dialogues
from todeval.evals.datasets.loader import Format
from todeval.evals.datasets.verdicts import read_audits, read_calibration, write_calibration
from todeval.evals.metrics.goal_success.calibration import CALIBRATION_FILE
from todeval.evals.metrics.goal_success.sampling import (
    SampleSpec,
    sample_description,
    sample_indices,
)
from todeval.evals.metrics.goal_success.tally import GoalSuccessTally, SegmentationTally
from todeval.evals.outputs import write_json
from todeval.evals.record_views import EvaluationRecord
from todeval.evals.report.goal_success import goal_success_section
from todeval.evals.schema import Dialogue, RecordError, routes_used
from todeval.graphs.corpus.job import (
    CorpusJob,
    Progress,
    finish,
    no_progress,
    publish,
    run_job,
    start_run,
)
from todeval.graphs.corpus.validity import figure_validity
from todeval.graphs.goal_success import (
    GoalSuccessTask,
    build_goal_segmentation_graph,
    build_goal_success_graph,
    run_goal_success,
    runs_as_functions,
)
from todeval.graphs.runner import context_summary
from todeval.graphs.suites import Branch, EvaluationSuite, Prepare
from todeval.nodes.context import Context
from todeval.nodes.goal_success.judges.segmentation import SegmentationJudge
from todeval.nodes.goal_success.judges.turn_quality import TurnQualityTeacher
from todeval.nodes.goal_success.roles import reads_business_rules, segmenter, teachers
from todeval.nodes.goal_success.settings import GoalSuccessSettings
from todeval.nodes.goal_success.state import GoalSuccessOutput, SegmentationOutput
from todeval.nodes.judges.spec import parse_spec
from todeval.stores.checkpoint import recorded_target

SUBSYSTEM = "goal_success"
SEGMENTATION = "goal_segmentation"


def corpus_routes(source: Path, fmt: Format, limit: int | None) -> dict[str, str]:
    """A first, cheap pass over the input: the routes its turns name (the default table)."""
    records = islice(load_dialogues(source, fmt), limit)
    return routes_used(record for record in records if isinstance(record, Dialogue))


def dialogue_input(dialogue: Dialogue) -> dict[str, Any]:
    """A dialogue as the goal-success graphs read it."""
    return {"dialogue": dialogue.model_dump(mode="json")}


def sampled_records(
    records: Iterable[Dialogue | RecordError], spec: SampleSpec
) -> tuple[list[Dialogue | RecordError], dict[str, Any]]:
    """Paper 004's sampling step: N of the readable dialogues, long sessions oversampled.

    Unreadable records are kept (they are reported as skipped, whatever the sample); the
    sampled dialogues keep their input order.

    Returns:
        The records to evaluate and the sample's description for ``summary.json``.
    """
    every = list(records)
    dialogues = [r for r in every if isinstance(r, Dialogue)]
    lengths = [len(d.turns) for d in dialogues]
    chosen = sample_indices(lengths, spec)
    kept = {id(dialogues[i]) for i in chosen}
    ids = [str(d.dialogue_id) for d in dialogues]
    picked = [r for r in every if not isinstance(r, Dialogue) or id(r) in kept]
    return picked, sample_description(lengths, chosen, ids, spec)


def business_rules_note(
    context: Context, panel: Sequence[TurnQualityTeacher], segmentation: SegmentationJudge
) -> dict[str, Any]:
    """Which teachers and whether the segmenter read the SOP (``Context.teacher_sop``)."""
    if not GoalSuccessSettings.of(context).teacher_sop:
        return {"given": False}
    read = [t.name for t in panel if reads_business_rules(t)]
    return {
        "given": True,
        "chars": len(GoalSuccessSettings.of(context).teacher_sop),
        "read_by": read,
        "ignored_by": [t.name for t in panel if t.name not in read],
        "segmenter": {"judge": segmentation.name, "reads": reads_business_rules(segmentation)},
        "note": "LLM teachers and an LLM segmenter get the rules in the Appendix D prompt; "
        "local judges apply fixed rubrics and ignore them",
    }


def prior_calibration(context: Context) -> dict[str, Any] | None:
    """The calibration ``Context.teacher_calibration`` names, read before the run starts.

    Raises:
        ValueError: The file is not a calibration.
    """
    path = GoalSuccessSettings.of(context).teacher_calibration
    if not path:
        return None
    return read_calibration(Path(path))


def calibration_section(
    context: Context, tally: GoalSuccessTally, out: Path, prior: dict[str, Any] | None
) -> dict[str, Any]:
    """This run's per-teacher calibration (stored in ``calibration.json``) and the one applied."""
    current = tally.calibration()
    if current is not None:
        write_calibration(out / CALIBRATION_FILE, current)
    applied = None
    if prior is not None:
        applied = tally.applied_calibration(
            prior, str(GoalSuccessSettings.of(context).teacher_calibration)
        )
    return {
        "this_run": current,
        "file": str(out / CALIBRATION_FILE) if current is not None else None,
        "applied": applied,
    }


def goal_success_judges(context: Context) -> dict[str, Any]:
    """Who judged a goal-success run: the segmenter and the teachers."""
    return {
        "segmentation": context.spec("segmentation"),
        "turn_quality": list(context.specs("turn_quality")),
    }


def goal_success_corpus(
    source: Path,
    fmt: Format,
    context: Context,
    *,
    out: Path,
    checkpoints: str | None = None,
    limit: int | None = None,
    progress: Progress = no_progress,
) -> dict[str, Any]:
    """Run (or read back) every dialogue's thread; write goals, summary and report.

    With ``Context.gsr_sample`` only a sample of the (first ``limit``) dialogues runs
    (:func:`sampled_records`) and ``summary.json`` says what was sampled (``sample``).

    Raises:
        JudgeSpecError, JudgeConfigError: A judge spec is unknown or cannot be built here.

    Returns:
        The summary (as written to ``summary.json``).
    """
    start_run(context)
    prior = prior_calibration(context)
    segmentation = segmenter(context)
    panel = teachers(context)

    def prepare(dialogues: Sequence[Dialogue]) -> None:
        segmentation.prepare(dialogues)
        for teacher in panel:
            teacher.prepare(dialogues)

    tally = GoalSuccessTally(read_audits(out / "verdicts.jsonl"))
    records: Iterable[Dialogue | RecordError] = islice(load_dialogues(source, fmt), limit)
    drawn = None
    settings = GoalSuccessSettings.of(context)
    if settings.sample is not None:
        spec = SampleSpec(settings.sample, settings.sample_seed)
        records, drawn = sampled_records(records, spec)
    job = CorpusJob(
        subsystem=SUBSYSTEM,
        graph=build_goal_success_graph(),
        records=records,
        make_input=dialogue_input,
        output_keys=GoalSuccessOutput.__annotations__,
        tally=tally,
        lines_file="goals.jsonl",
        prepare=prepare,
    )
    stats = run_job(job, context, out=out, checkpoints=checkpoints, progress=progress)
    elapsed = stats.elapsed_s
    summary = (
        tally.summary(goal_success_judges(context))
        | {
            "subsystem": SUBSYSTEM,
            "run": {
                "input": str(source.resolve()),
                "format": fmt,
                "checkpoints": recorded_target(checkpoints),
                "limit": limit,
                "context": context_summary(context),
            },
            "sample": drawn,
            "business_rules": business_rules_note(context, panel, segmentation),
            "calibration": calibration_section(context, tally, out, prior),
        }
        | {"validity": figure_validity(context, ["gsr"])}
        | stats.details()
        | {
            "goals_per_s": round(tally.n_goals / elapsed, 1) if elapsed > 0 else None,
            "outputs": {name: str(out / name) for name in ("goals.jsonl", "report.html")},
        }
    )
    finish(
        out,
        summary,
        stats,
        title="todeval: Goal Success Rate",
        sections=[goal_success_section(summary, *tally.report_view())],
        meta={
            "input": str(source),
            "segmenter": context.spec("segmentation"),
            "teachers": ", ".join(context.specs("turn_quality")),
            "escalation": "on" if GoalSuccessSettings.of(context).escalate_ambiguous else "off",
        },
    )
    return summary


def segmentation_corpus(
    source: Path,
    fmt: Format,
    context: Context,
    *,
    out: Path,
    checkpoints: str | None = None,
    limit: int | None = None,
    progress: Progress = no_progress,
) -> dict[str, Any]:
    """Segment every dialogue; write ``segments.jsonl`` and ``summary.json``.

    Raises:
        JudgeSpecError, JudgeConfigError: The segmentation spec is unknown or cannot be built.

    Returns:
        The summary (as written to ``summary.json``).
    """
    start_run(context)
    judge = segmenter(context)
    tally = SegmentationTally()
    job = CorpusJob(
        subsystem=SEGMENTATION,
        graph=build_goal_segmentation_graph(),
        records=islice(load_dialogues(source, fmt), limit),
        make_input=dialogue_input,
        output_keys=SegmentationOutput.__annotations__,
        tally=tally,
        lines_file="segments.jsonl",
        prepare=judge.prepare,
    )
    stats = run_job(job, context, out=out, checkpoints=checkpoints, progress=progress)
    elapsed = stats.elapsed_s
    summary = (
        {"subsystem": SEGMENTATION, "input": str(source), "format": fmt}
        | tally.summary(context.spec("segmentation"))
        | {"context": context_summary(context)}
        | stats.details()
        | {
            "turns_per_s": round(tally.turns / elapsed, 1) if elapsed > 0 else None,
            "outputs": {"segments": str(out / "segments.jsonl")},
        }
    )
    publish(stats)
    write_json(out / "summary.json", summary)
    return summary


def _check_goal_success_judges(context: Context) -> None:
    segmenter(context)
    teachers(context)


def _computes_only(context: Context) -> bool:
    return runs_as_functions(context) and parse_spec(context.spec("segmentation")).is_local


def _prepare(context: Context) -> Prepare:
    """The segmenter and the teachers embed a chunk's dialogues in one batch."""
    segmentation, panel = segmenter(context), teachers(context)

    def prepare(records: Sequence[EvaluationRecord]) -> None:
        dialogues = [record.dialogue for record in records]
        segmentation.prepare(dialogues)
        for teacher in panel:
            teacher.prepare(dialogues)

    return prepare


EVALUATION = EvaluationSuite(
    run=cast(Branch, run_goal_success),
    task_schema=GoalSuccessTask,
    judges=goal_success_judges,
    roles=("segmentation", "turn_quality"),
    check=_check_goal_success_judges,
    computes_only=_computes_only,
    prepare=_prepare,
)
"""Goal success in ``todeval evaluate`` (its registry line names this)."""
