"""Goal success over a corpus (paper 004): Goal Success Rate and root causes, or segmentation.

:func:`goal_success_corpus` runs the goal-success graph on every dialogue and writes
``goals.jsonl`` (one line per goal), ``summary.json`` and ``report.html``; turns the teachers split
on pause their thread for a human (``todeval review`` answers them and calls it again).
:func:`segmentation_corpus` runs the goal-segmentation graph alone and writes
``segments.jsonl`` and ``summary.json``, with boundary P/R/F1, Pk and WindowDiff against gold.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from itertools import islice
from pathlib import Path
from typing import Any

from evals.datasets import load_dialogues
from evals.datasets.loader import Format
from evals.metrics.goal_success.tally import GoalSuccessTally, SegmentationTally, read_audits
from evals.outputs import write_json
from evals.report.goal_success import goal_success_section
from evals.schema import Dialogue, routes_used
from graphs.corpus.job import (
    CorpusJob,
    Progress,
    finish,
    no_progress,
    publish,
    run_job,
    start_run,
)
from graphs.corpus.validity import figure_validity
from graphs.goal_success import build_goal_segmentation_graph, build_goal_success_graph
from nodes.context import Context
from nodes.goal_success.judges import segmenter, teachers
from nodes.goal_success.state import GoalSuccessOutput, SegmentationOutput

SUBSYSTEM = "goal_success"
SEGMENTATION = "goal_segmentation"


def corpus_routes(source: Path, fmt: Format, limit: int | None) -> dict[str, str]:
    """A first, cheap pass over the input: the routes its turns name (the default table)."""
    records = islice(load_dialogues(source, fmt), limit)
    return routes_used(record for record in records if isinstance(record, Dialogue))


def dialogue_input(dialogue: Dialogue) -> dict[str, Any]:
    """A dialogue as the goal-success graphs read it."""
    return {"dialogue": dialogue.model_dump(mode="json")}


def goal_success_judges(context: Context) -> dict[str, Any]:
    """Who judged a goal-success run: the segmenter and the teachers."""
    return {"segmenter": context.segmentation_judge, "teachers": list(context.teachers)}


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

    Raises:
        JudgeSpecError, JudgeConfigError: A judge spec is unknown or cannot be built here.

    Returns:
        The summary (as written to ``summary.json``).
    """
    start_run(context)
    segmentation = segmenter(context)
    panel = teachers(context)

    def prepare(dialogues: Sequence[Dialogue]) -> None:
        segmentation.prepare(dialogues)
        for teacher in panel:
            teacher.prepare(dialogues)

    tally = GoalSuccessTally(read_audits(out / "verdicts.jsonl"))
    job = CorpusJob(
        subsystem=SUBSYSTEM,
        graph=build_goal_success_graph(),
        records=islice(load_dialogues(source, fmt), limit),
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
                "checkpoints": checkpoints,
                "limit": limit,
                "context": asdict(context),
            },
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
        sections=[goal_success_section(summary, tally.report_goals, tally.report_dialogues)],
        meta={
            "input": str(source),
            "segmenter": context.segmentation_judge,
            "teachers": ", ".join(context.teachers),
            "escalation": "on" if context.escalate_ambiguous else "off",
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
        | tally.summary(context.segmentation_judge)
        | {"context": asdict(context)}
        | stats.details()
        | {
            "turns_per_s": round(tally.turns / elapsed, 1) if elapsed > 0 else None,
            "outputs": {"segments": str(out / "segments.jsonl")},
        }
    )
    publish(stats)
    write_json(out / "summary.json", summary)
    return summary
