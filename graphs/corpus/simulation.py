"""Live simulation over a domain's tasks (``todeval simulate``), scored as AgentChangeBench does.

Every (task, trial) runs the simulation graph on its own checkpointed thread (a killed run
resumes each conversation at its last message); the finished conversations become
``results.json``, a tau2-compatible results file, which the goal-shift scorer then reads
unchanged, exactly as ``todeval goal-shift results.json`` would (TSR, TUE, TCRR, GSRT, pass^k
over the trials). Failed conversations are attributed to the agent, the simulated user or the
environment (:mod:`evals.metrics.simulation.attribution`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from todeval.evals.datasets.errors import DatasetFormatError
from todeval.evals.metrics.simulation.attribution import attribute_failures
from todeval.evals.metrics.simulation.noise import trial_noise
from todeval.evals.metrics.simulation.simulator_audit import audit_run, figures_apart
from todeval.evals.metrics.simulation.tally import SimulationRecord, SimulationTally, results_file
from todeval.evals.metrics.simulation.tool_faults import fault_recovery
from todeval.evals.outputs import write_json
from todeval.evals.report.goal_shift import goal_shift_section
from todeval.evals.report.simulation import simulation_section
from todeval.evals.schema import RecordError
from todeval.graphs.corpus.goal_shift import goal_shift_judges, load_run, score_run
from todeval.graphs.corpus.job import (
    CorpusJob,
    Progress,
    finish,
    no_progress,
    run_job,
    start_run,
)
from todeval.graphs.corpus.validity import shift_floors
from todeval.graphs.runner import context_summary
from todeval.graphs.simulation import build_simulation_graph
from todeval.nodes.context import Context
from todeval.nodes.judges.limits import configure_llm, policy_for
from todeval.nodes.simulation.agents import AgentSpecError
from todeval.nodes.simulation.agents.replay import ReplayAgent
from todeval.nodes.simulation.domains import DOMAINS
from todeval.nodes.simulation.settings import SimulationSettings
from todeval.nodes.simulation.state import SimulationOutput

SUBSYSTEM = "simulation"


def domain_tasks(domain: str, tasks_path: Path | None = None) -> list[dict[str, Any]]:
    """The domain's tasks (its registered task file, or ``tasks_path``).

    Raises:
        DatasetFormatError: Unknown domain or unreadable task file.
    """
    if domain not in DOMAINS:
        raise DatasetFormatError(f"unknown domain {domain!r}; known: {', '.join(DOMAINS)}")
    path = tasks_path or DOMAINS[domain].tasks_path()
    try:
        tasks = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise DatasetFormatError(f"{path}: cannot read the tasks ({error})") from error
    if not isinstance(tasks, list):
        raise DatasetFormatError(f"{path}: expected a list of tasks")
    return [task for task in tasks if isinstance(task, dict)]


def environment_info(domain: str) -> dict[str, Any]:
    """tau2's ``info.environment_info``: the domain, its policy and the tools the agent had.

    Without it a reader of results.json that is not told the domain (``todeval evaluate``)
    knows no tool list and leaves the tool names unchecked; with it, calls are checked against
    the very tools the agent was given.
    """
    declared = DOMAINS[domain]
    return {
        "domain_name": domain,
        "policy": declared.policy(),
        "tool_defs": declared.tool_schemas(),
    }


def replayed_task_ids(
    agent: str, tasks: Sequence[dict[str, Any]], task_ids: Sequence[str] | None, trials: int
) -> Sequence[str] | None:
    """With a replay agent: the tasks its file recorded (unless given), each with every trial.

    Raises:
        DatasetFormatError: The file lacks a (task, trial) asked for (fewer trials recorded
            than ``--trials``, or a task it never ran): said before anything runs.
    """
    kind, _, path = agent.partition(":")
    if kind != "replay":
        return task_ids
    try:
        held = set(ReplayAgent(path.strip()).conversations)
    except AgentSpecError as error:
        raise DatasetFormatError(str(error)) from error
    recorded = {task for task, _ in held}
    wanted = list(task_ids) if task_ids else [
        str(t.get("id")) for t in tasks if str(t.get("id")) in recorded
    ]  # fmt: skip
    missing = [
        (task, trial) for task in wanted for trial in range(trials) if (task, trial) not in held
    ]
    if missing:
        task, trial = missing[0]
        raise DatasetFormatError(
            f"{agent} holds no recorded conversation for {len(missing)} of the "
            f"{len(wanted) * trials} (task, trial) pairs asked for (first: task {task!r}, "
            f"trial {trial}); ask for at most the trials it recorded, or --tasks it ran"
        )
    return wanted


def simulation_records(
    domain: str,
    tasks: Sequence[dict[str, Any]],
    *,
    trials: int,
    task_ids: Sequence[str] | None = None,
    seed: int = 300,
) -> Iterator[SimulationRecord | RecordError]:
    """One record per (task, trial); an unknown task id is a skipped record with the reason."""
    by_id = {str(task.get("id")): task for task in tasks}
    wanted = list(task_ids) if task_ids else list(by_id)
    for task_id in wanted:
        task = by_id.get(task_id)
        if task is None:
            yield RecordError(
                file=f"{domain} tasks",
                dialogue_id=task_id,
                field="id",
                message=f"no task {task_id!r} in the {domain} tasks",
            )
            continue
        for trial in range(trials):
            yield SimulationRecord(
                eval_id=f"{task_id}#{trial}",
                domain=domain,
                task=task,
                trial=trial,
                seed=seed + trial,
            )


def simulate_corpus(
    domain: str,
    context: Context,
    *,
    out: Path,
    trials: int = 1,
    task_ids: Sequence[str] | None = None,
    tasks_path: Path | None = None,
    seed: int = 300,
    checkpoints: str | None = None,
    max_concurrency: int = 1,
    progress: Progress = no_progress,
) -> dict[str, Any]:
    """Simulate every (task, trial); write results.json, then score it as a goal-shift run.

    Writes ``results.json`` (tau2-compatible), ``conversations.jsonl`` (the goal-shift rows),
    ``summary.json`` and ``report.html``.

    Raises:
        DatasetFormatError: Unknown domain or unreadable tasks.

    Returns:
        The summary (as written to ``summary.json``).
    """
    start_run(context)
    # The run's seed goes to every model call whose provider takes one: the agent's and the
    # LLM user's with their conversation's (seed + trial), the LLM judges' with the run's.
    configure_llm(replace(policy_for(context), seed=seed))
    tasks = domain_tasks(domain, tasks_path)
    task_ids = replayed_task_ids(SimulationSettings.of(context).agent, tasks, task_ids, trials)
    tally = SimulationTally()
    job = CorpusJob(
        subsystem=f"{SUBSYSTEM}:{domain}",
        graph=build_simulation_graph(),
        records=simulation_records(domain, tasks, trials=trials, task_ids=task_ids, seed=seed),
        make_input=lambda r: {
            "domain": r.domain,
            "task": r.task,
            "trial": r.trial,
            "seed": r.seed,
        },  # fmt: skip
        output_keys=SimulationOutput.__annotations__,
        tally=tally,
        lines_file=None,
        unit="conversation",
        max_concurrency=max_concurrency,
        # A live conversation cannot restart: the agent under test is not cached and need not
        # be deterministic, so a killed one continues from its last message.
        durability="sync",
    )
    simulated = run_job(job, context, out=out, checkpoints=checkpoints, progress=progress)
    used = {s["task_id"] for s in tally.simulations}
    info = {
        "domain": domain,
        "num_trials": trials,
        "max_steps": SimulationSettings.of(context).max_steps,
        "seed": seed,
        "agent_info": {"implementation": "todeval", "spec": SimulationSettings.of(context).agent},
        "user_info": {"implementation": "todeval", "spec": context.spec("user_simulator")},
        "environment_info": environment_info(domain),
    }
    results = out / "results.json"
    out.mkdir(parents=True, exist_ok=True)
    write_json(results, results_file([t for t in tasks if str(t.get("id")) in used],
                                     tally.simulations, info))  # fmt: skip
    scored, stats = score_run(load_run(results, domain=domain), context, out=out,
                              checkpoints=checkpoints)  # fmt: skip
    attribution = attribute_failures(tasks, tally.simulations)
    audit = audit_run(tasks, tally.simulations)
    audit["figures"] = figures_apart(scored.rows, [c["id"] for c in audit["flagged_conversations"]])
    extras: dict[str, Any] = {
        "attribution": attribution,
        "simulator_audit": audit,
        "noise": trial_noise(scored.rows, seed=seed),
    }
    faults = SimulationSettings.of(context).tool_faults
    if faults:
        extras["tool_faults"] = {"spec": faults, "recovery": fault_recovery(tally.simulations)}
    summary = (
        scored.summary(compat="none", judges=goal_shift_judges(context))
        | {"simulation": tally.summary() | extras}
        | {
            "subsystem": SUBSYSTEM,
            "run": {
                "domain": domain,
                "trials": trials,
                "results": str(results),
                "players": {
                    "agent": SimulationSettings.of(context).agent,
                    "user_simulator": context.spec("user_simulator"),
                },
                "context": context_summary(context),
            },  # fmt: skip
        }
        | stats.details()
        | {"elapsed_s": round(simulated.elapsed_s + stats.elapsed_s, 2)}
    )
    summary["floors"] = shift_floors(summary)
    finish(
        out,
        summary,
        stats,
        title="todeval: live simulation",
        sections=[simulation_section(summary), goal_shift_section(summary, scored.rows)],
        meta={
            "domain": domain,
            "agent": SimulationSettings.of(context).agent,
            "user": context.spec("user_simulator"),
            "trials": str(trials),
        },
    )
    return summary
