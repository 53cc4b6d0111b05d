"""ATOD synthesis over a set (paper 000, §4): ``DIR/dialogues.jsonl`` and ``DIR/summary.json``.

Dialogue ``i`` of a run with seed ``S`` is ``atod-S-iiiii``, with its own seed and a complexity
stratum (exactly ``round(n * complex_share)`` complex ones); each runs in its own checkpointed
thread of the synthesis graph, so a killed run resumes where it stopped and a repeated run gives
the same set. ``dialogues.jsonl`` holds the accepted dialogues in ATOD's format (Listings 1-2,
with ``complexity_class``), which ``todeval track-goals`` reads; ``summary.json`` the
co-occurrence graph's statistics beside the paper's Tables 7-8 with the reasons they differ,
class counts, rejections by stage and reason, and the license of the derived data.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from todeval.evals.metrics.goal_tracking.cooccurrence import compare_with_paper
from todeval.evals.metrics.goal_tracking.synthesis_tally import AtodSynthesisPlan, SynthesisTally
from todeval.evals.outputs import write_json
from todeval.graphs.corpus.job import CorpusJob, Progress, no_progress, publish, run_job, start_run
from todeval.graphs.goal_tracking import build_atod_synthesis_graph
from todeval.graphs.runner import context_summary
from todeval.nodes.context import Context
from todeval.nodes.goal_tracking.roles import (
    DIALOGUE_GENERATION,
    STATUS_ANNOTATION,
    TRAJECTORY_ANNOTATION,
)
from todeval.nodes.goal_tracking.settings import GoalTrackingSettings
from todeval.nodes.goal_tracking.synthesis.library import episode_library
from todeval.nodes.goal_tracking.synthesis.sampling import strata
from todeval.nodes.goal_tracking.synthesis.state import AtodSynthesisOutput
from todeval.nodes.judges.spec import JudgeConfigError, parse_spec

SUBSYSTEM = "atod_synthesis"


def synthesis_plans(n: int, seed: int, complex_share: float) -> list[AtodSynthesisPlan]:
    """The ``n`` dialogues to draw (module doc)."""
    return [
        AtodSynthesisPlan(
            dialogue_id=f"atod-{seed}-{i:05d}", seed=seed * 1_000_003 + i, complexity_class=stratum
        )
        for i, stratum in enumerate(strata(n, complex_share, seed))
    ]


def check_synthesis_judges(context: Context) -> None:
    """Refuse judge combinations that cannot work, before any dialogue is drawn.

    Raises:
        JudgeConfigError: The local generator with an LLM annotation (it composes only what the
            local annotator planned), or an LLM generator with local status labels.
        JudgeSpecError: A spec is malformed.
    """
    annotate = parse_spec(context.spec("trajectory_annotation"))
    generate = parse_spec(context.spec("dialogue_generation"))
    label = parse_spec(context.spec("status_annotation"))
    if generate.is_local and not annotate.is_local:
        raise JudgeConfigError(
            "the local dialogue generator composes SGD episodes the local annotator chose; "
            "use an LLM dialogue_generation judge with an LLM trajectory_annotation judge"
        )
    if not generate.is_local and label.is_local:
        raise JudgeConfigError(
            "an LLM-written dialogue has no labels of its own: give status_annotation an LLM spec"
        )
    TRAJECTORY_ANNOTATION.judge(context.spec("trajectory_annotation"), context.llm.max_retries)
    DIALOGUE_GENERATION.judge(context.spec("dialogue_generation"), context.llm.max_retries)
    STATUS_ANNOTATION.judge(context.spec("status_annotation"), context.llm.max_retries)


def synthesize_atod(
    n: int,
    *,
    seed: int = 0,
    out: Path,
    context: Context | None = None,
    source: Path | None = None,
    complex_share: float | None = None,
    checkpoints: str | None = None,
    progress: Progress = no_progress,
) -> dict[str, Any]:
    """Draw ``n`` synthetic ATOD dialogues; write ``dialogues.jsonl`` and ``summary.json``.

    Args:
        n: Dialogues to draw (some may be given up after ``Context.synthesis_attempts``).
        seed: The run's seed.
        out: The output folder.
        context: Judges and settings (``GoalTrackingSettings``: ``synthesis_source``...).
        source: An SGD file to draw from (overrides the settings' ``synthesis_source``).
        complex_share: Share of complex dialogues (overrides the settings' ``complex_share``).
        checkpoints: The checkpointer target (``:memory:`` for none).
        progress: A progress bar around the stream of dialogues.

    Returns:
        The summary, as written.

    Raises:
        ValueError: ``n`` below 1 or a share outside [0, 1].
        JudgeConfigError, JudgeSpecError: See :func:`check_synthesis_judges`.
        DatasetFormatError: The source cannot be read.
    """
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    context = context or Context()
    if source is not None:
        context = context.updated(settings={"goal_tracking": {"synthesis_source": str(source)}})
    if complex_share is not None:
        context = context.updated(settings={"goal_tracking": {"complex_share": complex_share}})
    start_run(context)
    check_synthesis_judges(context)
    library = episode_library(GoalTrackingSettings.of(context).synthesis_source)
    tally = SynthesisTally()
    job = CorpusJob(
        subsystem=SUBSYSTEM,
        graph=build_atod_synthesis_graph(),
        records=synthesis_plans(n, seed, GoalTrackingSettings.of(context).complex_share),
        make_input=lambda plan: plan.model_dump(),
        output_keys=AtodSynthesisOutput.__annotations__,
        tally=tally,
        lines_file="dialogues.jsonl",
    )
    stats = run_job(job, context, out=out, checkpoints=checkpoints, progress=progress)
    figures = library.statistics
    summary = {
        "subsystem": SUBSYSTEM,
        "co_occurrence": {
            "statistics": figures,
            "versus_paper": compare_with_paper(
                figures["sequences"],
                figures["graph"],
                ordered=figures["ordered_pair_graph"],
                first_mention=figures["sequences_first_mention"],
            ),
        },
        **tally.summary(),
        "run": {"n": n, "seed": seed, "context": context_summary(context)},
        **stats.details(),
    }
    publish(stats)
    write_json(out / "summary.json", summary)
    return summary
