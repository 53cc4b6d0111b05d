"""ProactiveEval over many environments (paper 003): data synthesis, and the two tasks.

``run_target_planning`` / ``run_dialogue_guidance`` run the agent under test on every
environment of a release-layout folder (or one JSON file), ``runs`` times (guidance: at each
agreeableness tier too), one checkpointed thread per run with every step checkpointed, and write
``OUT/results.jsonl`` (one line per environment and run), ``OUT/summary.json`` (mean and std over
the runs, overall and by domain, tier and agreeableness) and ``OUT/report.html``.


``synthesize_proactive`` writes N environments, spread over the domains in turn, each in its own
checkpointed thread of the synthesis graph. Unlike the scoring corpora (one checkpoint per
finished record), every *stage* is checkpointed here: an LLM stage that fails raises, and the
same command resumes the thread at that stage instead of redoing the topic walk, environment,
candidates and ensemble. Writes ``OUT/synthesis.jsonl`` (one line per environment: its stages,
panel predictions and votes), ``OUT/dataset/<domain>/{eval,fair,hard}.json`` (the kept items,
loadable by :func:`evals.datasets.proactive.load_proactive`), ``OUT/summary.json`` and
``OUT/report.html``.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal, cast

from langgraph.graph.state import CompiledStateGraph

from todeval.evals.datasets.proactive import load_proactive, write_release
from todeval.evals.metrics.proactive.synthesis import SynthesisTally
from todeval.evals.metrics.proactive.tasks import TaskTally
from todeval.evals.proactive_schema import (
    AGREEABLENESS,
    DOMAINS,
    Agreeableness,
    ProactiveItem,
    ProactiveRun,
    SynthesisSeed,
    canonical_domain,
)
from todeval.evals.report.proactive import synthesis_section, task_section
from todeval.evals.results import ThreadResult
from todeval.evals.schema import RecordError
from todeval.graphs.corpus.job import (
    CorpusJob,
    Progress,
    finish,
    no_progress,
    run_job,
    start_run,
)
from todeval.graphs.proactive import (
    ProactiveTask,
    build_guidance_graph,
    build_planning_graph,
    build_synthesis_graph,
    run_proactive,
)
from todeval.graphs.runner import context_summary, run_dialogue
from todeval.graphs.suites import Branch, EvaluationSuite
from todeval.nodes.context import Context
from todeval.nodes.judges.floors import FIGURES, Floor, floors_for
from todeval.nodes.proactive.judges import check_scoring_judges, check_synthesis_judges
from todeval.nodes.proactive.reference_agent import GUIDE_SPEC, PLAN_SPEC
from todeval.nodes.proactive.scoring import GUIDANCE_MAX_TURNS
from todeval.nodes.proactive.settings import ProactiveSettings
from todeval.nodes.proactive.state import GuidanceOutput, PlanningOutput, SynthesisOutput

SUBSYSTEM = "proactive_synthesis"

#: Id prefixes per domain (the bundled sample's).
PREFIXES = {
    "recommendation": "rec",
    "persuasion": "per",
    "ambiguous_instruction": "ai",
    "long_term_follow_up": "lf",
    "system_operation": "sys",
    "glasses_assistant": "gas",
}


def synthesis_seeds(n: int, seed: int, domains: Sequence[str] = DOMAINS) -> list[SynthesisSeed]:
    """N environments to write, the domains in turn; ids ``syn<seed>-<prefix>-<nnn>``."""
    names = [canonical_domain(d) for d in domains]
    if n < 1 or not names:
        raise ValueError(f"need n >= 1 and at least one domain, got {n=}, {domains=}")
    return [
        SynthesisSeed(
            eval_id=f"syn{seed}-{PREFIXES.get(names[i % len(names)], 'x')}-{i + 1:03d}",
            domain=names[i % len(names)],
            seed=seed * 1_000_003 + i,
        )
        for i in range(n)
    ]


def _seed_input(seed: SynthesisSeed) -> dict[str, Any]:
    return {"seed_id": seed.eval_id, "domain": seed.domain, "seed": seed.seed}


def run_seed(
    graph: CompiledStateGraph[Any, Context, Any, Any], seed: SynthesisSeed, context: Context
) -> ThreadResult:
    """Run, resume (at the stage that stopped it) or read back one environment's thread."""
    return run_dialogue(
        graph,
        seed,
        subsystem=SUBSYSTEM,
        context=context,
        make_input=_seed_input,
        output_keys=SynthesisOutput.__annotations__,
        durability="sync",
    )


def synthesize_proactive(
    n: int,
    seed: int,
    context: Context,
    *,
    out: Path,
    domains: Sequence[str] = DOMAINS,
    checkpoints: str | None = None,
    max_concurrency: int = 1,
    progress: Progress = no_progress,
) -> dict[str, Any]:
    """Synthesise N environments and write them in the release layout (see the module doc).

    Args:
        n: Environments to attempt (the final check may reject some).
        seed: Seeds every environment (same N, seed and context: the same threads, resumed).
        context: The writer, the difficulty panel and matcher, the final-check panel,
            ``synthesis_candidates``, ``synthesis_temperature`` and ``max_refinements``.
        out: The output folder.
        domains: The domains to write, in turn.
        checkpoints: The checkpointer target (default ``.todeval/checkpoints.sqlite``).
        max_concurrency: Environments run at once (worker threads; LLM-bound runs gain).
        progress: A progress bar around the environments.

    Returns:
        The summary (as written to ``summary.json``).

    Raises:
        JudgeSpecError: A judge spec is unknown.
    """
    start_run(context)
    check_synthesis_judges(context)
    seeds = synthesis_seeds(n, seed, domains)
    tally = SynthesisTally()

    job = CorpusJob(
        subsystem=SUBSYSTEM,
        graph=build_synthesis_graph(),
        records=seeds,
        make_input=_seed_input,
        output_keys=SynthesisOutput.__annotations__,
        tally=tally,
        lines_file="synthesis.jsonl",
        unit="environment",
        max_concurrency=max_concurrency,
        durability="sync",  # a long pipeline resumes at the stage that stopped it
    )
    stats = run_job(job, context, out=out, checkpoints=checkpoints, progress=progress)
    written = write_release(tally.items, out / "dataset")
    summary = (
        tally.summary(stats.elapsed_s)
        | {
            "subsystem": "proactive",
            "task": "synthesis",
            "judges": synthesis_judges(context),
            "dataset": str(out / "dataset"),
            "files": [str(path.relative_to(out)) for path in written],
            "run": {
                "n": n,
                "seed": seed,
                "domains": list(domains),
                "context": context_summary(context),
            },
        }
        | stats.details()
    )
    finish(
        out,
        summary,
        stats,
        title="todeval: ProactiveEval data synthesis",
        sections=[synthesis_section(summary)],
        meta={"n": str(n), "seed": str(seed)},
    )
    return summary


def synthesis_judges(context: Context) -> dict[str, Any]:
    """The specs a synthesis run was given."""
    return {
        "synthesis_writer": context.spec("synthesis_writer"),
        "target_prediction": list(context.specs("target_prediction")),
        "difficulty": context.spec("difficulty"),
        "final_check": list(context.specs("final_check")),
        "synthesis_candidates": ProactiveSettings.of(context).synthesis_candidates,
        "synthesis_temperature": ProactiveSettings.of(context).synthesis_temperature,
        "max_refinements": ProactiveSettings.of(context).max_refinements,
    }


PLANNING = "proactive_planning"
GUIDANCE = "proactive_guidance"


def planning_runs(
    items: Iterable[ProactiveItem | RecordError], agent: str, runs: int
) -> Iterator[ProactiveRun | RecordError]:
    """Each environment ``runs`` times (ids ``<environment>/run<r>``)."""
    for item in items:
        if isinstance(item, RecordError):
            yield item
            continue
        for run in range(runs):
            yield _run_of(item, agent, run, f"{item.eval_id}/run{run + 1}")


def guidance_runs(
    items: Iterable[ProactiveItem | RecordError],
    agent: str,
    agreeableness: Sequence[Agreeableness],
    runs: int,
) -> Iterator[ProactiveRun | RecordError]:
    """Each environment at each tier ``runs`` times (ids ``<environment>/<tier>/run<r>``)."""
    for item in items:
        if isinstance(item, RecordError):
            yield item
            continue
        for tier in agreeableness:
            for run in range(runs):
                eval_id = f"{item.eval_id}/{tier}/run{run + 1}"
                seed = zlib.crc32(eval_id.encode())  # stable across processes
                yield _run_of(item, agent, run, eval_id).model_copy(
                    update={"agreeableness": tier, "seed": seed}
                )


def _run_of(item: ProactiveItem, agent: str, run: int, eval_id: str) -> ProactiveRun:
    return ProactiveRun(
        eval_id=eval_id,
        environment_id=item.eval_id,
        domain=item.domain,
        tier=item.tier,
        environment=item.environment,
        reference=item.reference,
        agent=agent,
        run=run,
    )


def _planning_input(run: ProactiveRun) -> dict[str, Any]:
    return {
        "eval_id": run.eval_id,
        "domain": run.domain,
        "environment": run.environment.model_dump(),
        "reference": run.reference.model_dump(),
        "agent": run.agent,
        "run": run.run,
    }


def _guidance_input(max_turns: int) -> Callable[[ProactiveRun], dict[str, Any]]:
    def make(run: ProactiveRun) -> dict[str, Any]:
        return _planning_input(run) | {
            "agreeableness": run.agreeableness,
            "seed": run.seed,
            "max_turns": max_turns,
        }

    make_input: Callable[[ProactiveRun], dict[str, Any]] = make
    return make_input


def run_target_planning(
    source: Path,
    context: Context,
    *,
    out: Path,
    agent: str = PLAN_SPEC,
    runs: int = 1,
    checkpoints: str | None = None,
    max_concurrency: int = 1,
    progress: Progress = no_progress,
) -> dict[str, Any]:
    """Target planning on every environment of ``source`` (see the module docstring)."""
    records = planning_runs(load_proactive(source), agent, runs)
    return _run_task(
        "plan",
        records,
        context,
        make_input=_planning_input,
        settings={"source": str(source), "agent": agent, "runs": runs},
        out=out,
        checkpoints=checkpoints,
        max_concurrency=max_concurrency,
        progress=progress,
    )


def run_dialogue_guidance(
    source: Path,
    context: Context,
    *,
    out: Path,
    agent: str = GUIDE_SPEC,
    agreeableness: Sequence[Agreeableness] = AGREEABLENESS,
    runs: int = 3,
    max_turns: int = GUIDANCE_MAX_TURNS,
    checkpoints: str | None = None,
    max_concurrency: int = 1,
    progress: Progress = no_progress,
) -> dict[str, Any]:
    """Dialogue guidance on every environment of ``source`` at each tier (module docstring).

    The simulated user is ``context.spec("user_simulator")``; the early stop is
    ``context.spec("target_reached")``.
    """
    records = guidance_runs(load_proactive(source), agent, agreeableness, runs)
    settings = {
        "source": str(source),
        "agent": agent,
        "runs": runs,
        "agreeableness": list(agreeableness),
        "max_turns": max_turns,
        "user_simulator": context.spec("user_simulator"),
        "target_reached_judge": context.spec("target_reached"),
    }
    return _run_task(
        "guide",
        records,
        context,
        make_input=_guidance_input(max_turns),
        settings=settings,
        out=out,
        checkpoints=checkpoints,
        max_concurrency=max_concurrency,
        progress=progress,
    )


def _run_task(
    task: Literal["plan", "guide"],
    records: Iterable[ProactiveRun | RecordError],
    context: Context,
    *,
    make_input: Callable[[ProactiveRun], dict[str, Any]],
    settings: dict[str, Any],
    out: Path,
    checkpoints: str | None,
    max_concurrency: int,
    progress: Progress,
) -> dict[str, Any]:
    start_run(context)
    check_scoring_judges(context)
    plan = task == "plan"
    subsystem = PLANNING if plan else GUIDANCE
    builder = build_planning_graph() if plan else build_guidance_graph()
    keys = (PlanningOutput if plan else GuidanceOutput).__annotations__
    tally = TaskTally(task)

    job = CorpusJob(
        subsystem=subsystem,
        graph=builder,
        records=records,
        make_input=make_input,
        output_keys=keys,
        tally=tally,
        lines_file="results.jsonl",
        unit="run",
        max_concurrency=max_concurrency,
        durability="sync",  # a killed live dialogue continues from its last turn
    )
    stats = run_job(job, context, out=out, checkpoints=checkpoints, progress=progress)
    summary = (
        tally.summary(stats.elapsed_s)
        | {
            "subsystem": "proactive",
            "task": "target_planning" if plan else "dialogue_guidance",
            "judges": task_judges(context, plan=plan),
            "run": settings | {"context": context_summary(context)},
            "floors": task_floors(plan=plan),
        }
        | stats.details()
    )
    title = "target planning" if plan else "dialogue guidance"
    finish(
        out,
        summary,
        stats,
        title=f"todeval: ProactiveEval {title}",
        sections=[task_section(summary, tally.rows)],
        meta={key: str(value) for key, value in settings.items()},
    )
    return summary


def task_floors(*, plan: bool) -> dict[str, Floor]:
    """The task's figures' do-nothing floors, measured on the bundled sample."""
    surface = "proactive_plan" if plan else "proactive_guide"
    return floors_for(surface, ["sample"], FIGURES[surface])


def task_judges(context: Context, *, plan: bool) -> dict[str, Any]:
    """The specs a task run was given."""
    if plan:
        return {"target_planning": context.spec("target_planning")}
    return {
        "guidance": context.spec("guidance"),
        "target_density": context.spec("target_density"),
        "target_reached": context.spec("target_reached"),
        "user_simulator": context.spec("user_simulator"),
    }


def scoring_judges(context: Context) -> dict[str, Any]:
    """Who scored the ProactiveEval suite of an evaluation."""
    return {
        "target_planning": context.spec("target_planning"),
        "guidance": context.spec("guidance"),
        "target_density": context.spec("target_density"),
    }


EVALUATION = EvaluationSuite(
    run=cast(Branch, run_proactive),
    task_schema=ProactiveTask,
    judges=scoring_judges,
    roles=("target_planning", "guidance", "target_density"),
    check=check_scoring_judges,
)
"""ProactiveEval in ``todeval evaluate`` (its registry line names this)."""
