"""Goal-shift robustness over a run (AgentChangeBench, paper 002): TSR, TUE, TCRR, GSRT.

Reads a tau2 / AgentChangeBench results file (or ``.jsonl`` transcripts of your own agent), runs
every conversation through the goal-shift graph (one checkpointed thread each) and writes
``conversations.jsonl``, ``summary.json`` and ``report.html``. Stored LLM-judge outputs are
reused unless ``Context.reuse_judgments`` is off; ``compat="upstream"`` reports the tool metrics
the way AgentChangeBench's own code computes them.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, cast

from todeval.evals.datasets.tau2 import GoalShiftRun, load_goal_shift_run
from todeval.evals.datasets.tau2_personas import persona_finder, read_personas
from todeval.evals.goal_shift_schema import Conversation
from todeval.evals.metrics.goal_shift.summary import Compat, goal_shift_summary, retention_drop
from todeval.evals.metrics.goal_shift.tally import GoalShiftTally
from todeval.evals.report.goal_shift import goal_shift_section
from todeval.graphs.corpus.job import (
    CorpusJob,
    Progress,
    RunStats,
    finish,
    no_progress,
    run_job,
    start_run,
)
from todeval.graphs.corpus.validity import shift_floors
from todeval.graphs.goal_shift import GoalShiftTask, build_goal_shift_graph, run_goal_shift
from todeval.graphs.runner import context_summary
from todeval.graphs.suites import Branch, EvaluationSuite
from todeval.nodes.context import Context
from todeval.nodes.goal_shift.roles import check_goal_shift_judges
from todeval.nodes.goal_shift.settings import GoalShiftSettings
from todeval.nodes.goal_shift.state import GoalShiftOutput
from todeval.stores.paths import data_dir

SUBSYSTEM = "goal_shift"


def load_run(
    source: Path,
    *,
    tasks: Path | None = None,
    personas: Path | None = None,
    tools: Path | None = None,
    domain: str | None = None,
) -> GoalShiftRun:
    """A results or transcripts file, with its tasks, personas and tool schemas.

    Personas not given are looked for beside the tasks, then in the AgentChangeBench data
    folder of the run's domain.

    Raises:
        DatasetFormatError: A file cannot be read.
    """
    return load_goal_shift_run(
        source,
        tasks_path=str(tasks) if tasks else None,
        personas=read_personas(personas) if personas else None,
        tools_path=str(tools) if tools else None,
        domain=domain,
        find_personas=persona_finder(tasks, [data_dir() / "agentchangebench" / "domains"]),
    )


def goal_shift_judges(context: Context) -> dict[str, Any]:
    """The judge specs a goal-shift run was given."""
    return {
        "shift_detection": context.spec("shift_detection"),
        "nl_assertion": context.spec("nl_assertion"),
        "reuse_judgments": GoalShiftSettings.of(context).reuse_judgments,
    }


def score_run(
    goal_run: GoalShiftRun,
    context: Context,
    *,
    out: Path | None,
    checkpoints: str | None = None,
    limit: int | None = None,
    progress: Progress = no_progress,
) -> tuple[GoalShiftTally, RunStats]:
    """Run every conversation's thread; the tally and the seconds it took."""
    schemas = (
        {name: schema.model_dump() for name, schema in goal_run.tool_schemas.items()}
        if goal_run.tool_schemas is not None
        else None
    )

    def make_input(conversation: Conversation) -> dict[str, Any]:
        return {"conversation": conversation.model_dump(mode="json"), "tool_schemas": schemas}

    # The thread id hashes the conversation and the context; the schemas join via the name.
    digest = hashlib.sha256(json.dumps(schemas, sort_keys=True).encode()).hexdigest()[:8]
    tally = GoalShiftTally(goal_run.task_errors)
    job = CorpusJob(
        subsystem=f"{SUBSYSTEM}+tools{digest}",
        graph=build_goal_shift_graph(),
        records=goal_run.records[:limit] if limit is not None else goal_run.records,
        make_input=make_input,
        output_keys=GoalShiftOutput.__annotations__,
        tally=tally,
        lines_file="conversations.jsonl",
        unit="conversation",
    )
    stats = run_job(job, context, out=out, checkpoints=checkpoints, progress=progress)
    return tally, stats


def goal_shift_corpus(
    goal_run: GoalShiftRun,
    context: Context,
    *,
    out: Path,
    source: Path,
    compat: Compat = "none",
    clean: GoalShiftRun | None = None,
    checkpoints: str | None = None,
    limit: int | None = None,
    progress: Progress = no_progress,
) -> dict[str, Any]:
    """Score the run; write conversations, summary and report.

    Args:
        goal_run: The run (:func:`load_run`).
        context: Judges for shift detection and NL assertions; reuse of stored judgments.
        out: The output folder.
        source: The run's file (recorded in the summary).
        compat: ``upstream`` for AgentChangeBench's own tool metrics.
        clean: The same tasks without shifts: retention and drop against it.
        checkpoints: The checkpointer target.
        limit: Only the first N conversations.
        progress: A progress bar around the conversations.

    Raises:
        JudgeSpecError: A judge spec is unknown.

    Returns:
        The summary (as written to ``summary.json``).
    """
    start_run(context)
    check_goal_shift_judges(context.spec("shift_detection"), context.spec("nl_assertion"))
    tally, stats = score_run(
        goal_run, context, out=out, checkpoints=checkpoints, limit=limit, progress=progress
    )
    summary = (
        tally.summary(compat=compat, judges=goal_shift_judges(context))
        | {
            "subsystem": SUBSYSTEM,
            "tools": goal_run.tools_origin,
            "run": {
                "input": str(source),
                "facts": goal_run.facts,
                "context": context_summary(context),
            },
        }
        | stats.details()
    )
    summary["floors"] = shift_floors(summary)
    if clean is not None:
        clean_tally, _ = score_run(clean, context, out=None, checkpoints=checkpoints, limit=limit)
        clean_summary = goal_shift_summary(clean_tally.rows, compat=compat, breakdowns=False)
        summary["retention"] = retention_drop(clean_summary, summary)
    finish(
        out,
        summary,
        stats,
        title="todeval: goal-shift robustness",
        sections=[goal_shift_section(summary, tally.rows)],
        meta={"input": str(source), "compat": compat, "tools": goal_run.tools_origin},
    )
    return summary


EVALUATION = EvaluationSuite(
    run=cast(Branch, run_goal_shift),
    task_schema=GoalShiftTask,
    # stored judgments are reused or not per run; the evaluation reports who judged
    judges=lambda context: {
        k: v for k, v in goal_shift_judges(context).items() if k != "reuse_judgments"
    },
    roles=("shift_detection", "nl_assertion"),
    check=lambda context: check_goal_shift_judges(
        context.spec("shift_detection"), context.spec("nl_assertion")
    ),
)
"""Goal shift in ``todeval evaluate`` (its registry line names this)."""
