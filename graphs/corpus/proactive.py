"""ProactiveEval data synthesis over many environments (paper 003): threads -> release layout.

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

from collections.abc import Iterator, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph.state import CompiledStateGraph

from evals.datasets.proactive import write_release
from evals.metrics.proactive.synthesis import SynthesisTally
from evals.proactive_schema import DOMAINS, SynthesisSeed, canonical_domain
from evals.report.proactive import synthesis_section
from evals.results import ThreadResult
from graphs.corpus.job import (
    CorpusJob,
    Progress,
    Stream,
    finish,
    no_progress,
    run_job,
    start_run,
)
from graphs.proactive import build_synthesis_graph
from graphs.runner import run_in_order, thread_id_for
from nodes.context import Context
from nodes.judges.limits import watch_unanswered
from nodes.judges.redact import error_text
from nodes.proactive.judges import check_synthesis_judges
from nodes.proactive.state import SynthesisOutput

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


def run_seed(
    graph: CompiledStateGraph[Any, Context, Any, Any], seed: SynthesisSeed, context: Context
) -> ThreadResult:
    """Run, resume (at the stage that stopped it) or read back one environment's thread."""
    thread_id = thread_id_for(SUBSYSTEM, seed, context)
    config: RunnableConfig = {"configurable": {"thread_id": thread_id}}
    keys = list(SynthesisOutput.__annotations__)
    snapshot = graph.get_state(config)
    pending = bool(snapshot.next or snapshot.tasks)
    if snapshot.values and not pending:
        done = {key: snapshot.values[key] for key in keys if key in snapshot.values}
        return ThreadResult(seed.eval_id, thread_id, done, resumed=True)
    graph_input = (
        None if pending else {"seed_id": seed.eval_id, "domain": seed.domain, "seed": seed.seed}
    )
    try:
        with watch_unanswered() as unanswered:
            # durability="sync": every stage's checkpoint is on disk before the next starts.
            output = graph.invoke(graph_input, config, context=context, durability="sync")
    except Exception as error:  # noqa: BLE001 - one environment's failure must not stop the run
        return ThreadResult(seed.eval_id, thread_id, None, error_text(error))
    return ThreadResult(seed.eval_id, thread_id, dict(output), unanswered=list(unanswered))


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

    def stream(saver: BaseCheckpointSaver[str]) -> Stream:
        graph = build_synthesis_graph().compile(checkpointer=saver, name=SUBSYSTEM)
        runs: Iterator[Any] = run_in_order(
            seeds, lambda s: run_seed(graph, s, context), max_concurrency=max_concurrency
        )
        return runs

    job = CorpusJob(
        subsystem=SUBSYSTEM,
        graph=build_synthesis_graph(),
        records=seeds,
        make_input=lambda s: {"seed_id": s.eval_id, "domain": s.domain, "seed": s.seed},
        output_keys=SynthesisOutput.__annotations__,
        tally=tally,
        lines_file="synthesis.jsonl",
        unit="environment",
    )
    stats = run_job(
        job, context, out=out, checkpoints=checkpoints, progress=progress, stream=stream
    )
    written = write_release(tally.items, out / "dataset")
    summary = (
        tally.summary(stats.elapsed_s)
        | {
            "subsystem": "proactive",
            "task": "synthesis",
            "judges": synthesis_judges(context),
            "dataset": str(out / "dataset"),
            "files": [str(path.relative_to(out)) for path in written],
            "run": {"n": n, "seed": seed, "domains": list(domains), "context": asdict(context)},
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
        "synthesis_writer": context.synthesis_writer,
        "difficulty_panel": list(context.difficulty_panel),
        "difficulty_judge": context.difficulty_judge,
        "final_check_panel": list(context.final_check_panel),
        "synthesis_candidates": context.synthesis_candidates,
        "synthesis_temperature": context.synthesis_temperature,
        "max_refinements": context.max_refinements,
    }
