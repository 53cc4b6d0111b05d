"""``todeval simulate``: an agent under test talks to a simulated user over a domain's tasks.

The work is :func:`graphs.corpus.simulation.simulate_corpus` (re-exported by
:mod:`graphs.api`); this module parses, shows progress and prints one line.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from todeval.cli.common import (
    UsageError,
    add_gate_arguments,
    add_judge_arguments,
    add_llm_arguments,
    command_judges,
    count,
    fmt_figure,
    gate,
    input_path,
    progress,
    uses_llm,
    with_llm_settings,
    writable_folder,
)
from todeval.graphs.api import (
    SIMULATION_DOMAINS,
    Context,
    SimulationSettings,
    ToolFaults,
    ToolFaultSpecError,
    domain_tasks,
    simulate_corpus,
    simulation_figures,
)


def add_parser(subparsers: Any) -> None:
    """Register ``simulate`` and its options."""
    parser = subparsers.add_parser(
        "simulate",
        help="run an agent live against a simulated user and a tool database (tau2 run)",
        description=(
            "Put an agent under test in front of a simulated user over AgentChangeBench's "
            "tasks: the user follows the task's persona, known information and goal shifts; "
            "the agent's tool calls run against the domain's database, reset per trial. Each "
            "(task, trial) is a checkpointed conversation: re-running the same command resumes "
            "them where they stopped. Writes OUT/results.json (tau2-compatible: todeval "
            "goal-shift and todeval evaluate read it), OUT/summary.json with TSR, TUE, TCRR, "
            "GSRT, pass^k and whose fault each failure was, and OUT/report.html."
        ),
    )
    parser.add_argument(
        "--domain",
        required=True,
        choices=SIMULATION_DOMAINS,
        help="the tool domain: its tasks, tools, database and policy",
    )
    parser.add_argument(
        "--list-tasks",
        action="store_true",
        help="print the domain's task ids (with their goal sequences) and exit",
    )
    parser.add_argument(
        "--agent",
        metavar="SPEC",
        help="the agent under test: provider:model (tool calling), "
        "openai:model@http://host/v1, replay:RESULTS.json, graph:package.module:graph, "
        "python:package.module:function or a LangGraph server assistant",
    )
    add_judge_arguments(parser, ["user_simulator"], user=True)
    parser.add_argument("--trials", type=count, default=1, help="trials per task (pass^k)")
    parser.add_argument(
        "--tasks", default=None, metavar="IDS", help="comma-separated task ids (default: all)"
    )
    parser.add_argument("--task-file", default=None, help="a tasks JSON instead of the domain's")
    parser.add_argument("--seed", type=int, default=300, help="first trial's seed (default 300)")
    parser.add_argument(
        "--max-steps",
        type=count,
        default=SimulationSettings().max_steps,
        help="agent turns per conversation",
    )
    parser.add_argument(
        "--agent-max-tokens", type=count, default=None, help="a chat-model agent's longest answer"
    )
    parser.add_argument(
        "--fold-tool-results",
        action="store_true",
        help="send tool results to a chat-model agent as user messages (for servers whose chat "
        "template drops tool messages, e.g. llama.cpp's chatml-function-calling)",
    )
    parser.add_argument(
        "--tool-faults",
        default="",
        type=tool_faults,
        metavar="RATE[:KINDS]",
        help="inject faults into the agent's tool calls, reproducibly from --seed: a rate and "
        "optionally kinds, e.g. 0.2 or 0.1:timeout,error (kinds: timeout, error, empty, "
        "corrupted, stale; default: none); the summary reports how the agent recovered",
    )
    parser.add_argument("--out", type=writable_folder, help="output folder (required to run)")
    parser.add_argument(
        "--checkpoints",
        default=None,
        help="SQLite file or postgresql://user@host:port/db (shared by workers; the cluster extra) "
        "for the checkpoints (default .todeval/checkpoints.sqlite; ':memory:' for none)",
    )
    parser.add_argument(
        "--max-concurrency",
        type=count,
        default=None,
        help="conversations at once, and so the agent's calls in flight (default: "
        "--llm-concurrency with an LLM agent or user, else 1); without --llm-concurrency, the "
        "LLM user's and judges' calls may also have this many in flight per endpoint",
    )
    add_llm_arguments(parser, dry_run=False)
    add_gate_arguments(parser, what="a figure (tsr, tue, tcrr, pass^1, ...)")
    parser.set_defaults(run=run)


def list_tasks(args: argparse.Namespace) -> int:
    """One line per task: id, then its goal sequence (what the simulated user will ask)."""
    path = Path(args.task_file) if args.task_file else None
    for task in domain_tasks(args.domain, path):
        shifts = (task.get("user_scenario") or {}).get("goal_shifts") or {}
        print(f"{task.get('id')}\t{' -> '.join(map(str, shifts.get('goals') or []))}")
    return 0


def tool_faults(text: str) -> str:
    """``--tool-faults``: checked here, so a bad spec is a usage error before anything runs."""
    try:
        faults = ToolFaults.parse(text)
    except ToolFaultSpecError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return faults.spec() if faults else ""


def run(args: argparse.Namespace) -> int:
    """Simulate, score, print one line (or list the tasks)."""
    if args.list_tasks:
        return list_tasks(args)
    if not args.agent or not args.out:
        raise UsageError("--agent and --out are required (or --list-tasks)")
    context = with_llm_settings(
        Context(
            judges=command_judges(args),
            settings={
                "simulation": {
                    "agent": args.agent,
                    "max_steps": args.max_steps,
                    "agent_max_output_tokens": args.agent_max_tokens,
                    "agent_fold_tool_results": args.fold_tool_results,
                    "tool_faults": args.tool_faults,
                }
            },
        ),
        args,
    )
    concurrency = args.max_concurrency or (context.llm.max_concurrency if uses_llm(context) else 1)
    if args.llm_concurrency is None and concurrency > context.llm.max_concurrency:
        # One user call per conversation at a time: N conversations need N in flight. An
        # explicit --llm-concurrency keeps its cap (the agent under test has none but N).
        context = context.with_flat({"llm_max_concurrency": concurrency})
    summary = simulate_corpus(
        args.domain,
        context,
        out=args.out,
        trials=args.trials,
        task_ids=[t.strip() for t in args.tasks.split(",") if t.strip()] if args.tasks else None,
        tasks_path=input_path(args.task_file) if args.task_file else None,
        seed=args.seed,
        checkpoints=args.checkpoints,
        max_concurrency=concurrency,
        progress=progress,
    )
    print(one_line(summary, args.out))
    if not summary["simulation"]["counts"]["conversations"]:
        return 1
    return gate(args, lambda: simulation_figures(summary), 0)


def one_line(summary: dict[str, Any], out: Path) -> str:
    """The last line a run prints: who played, the figures, whose fault the failures were."""
    simulation = summary["simulation"]
    counts = simulation["counts"]
    causes = simulation["attribution"]["counts"]
    pass_1 = (summary.get("pass_hat_k") or {}).get("1")
    judges = (summary.get("run") or {}).get("players") or {}
    audit = simulation.get("simulator_audit") or {}
    return (
        f"simulated {counts['conversations']} conversations of {judges.get('agent', '?')} with "
        f"user {judges.get('user_simulator', '?')}: TSR {fmt_figure(summary.get('tsr'))}"
        f"{_noise(simulation.get('noise'))}{_floor(summary)}"
        f", pass^1 {fmt_figure(pass_1)}; failures by agent {causes.get('agent', 0)}, user "
        f"simulator {causes.get('user_simulator', 0)}, environment "
        f"{causes.get('environment', 0)}; simulator audit flagged {audit.get('flagged', 0)}"
        f"{_faults(simulation.get('tool_faults'))}; {counts['skipped_records']} skipped, "
        f"{counts['failed_conversations']} failed; wrote {out / 'results.json'}, "
        f"{out / 'summary.json'} and {out / 'report.html'}"
    )


def _floor(summary: dict[str, Any]) -> str:
    floor = (summary.get("floors") or {}).get("tsr") or {}
    if floor.get("value") is None:
        return ""
    return f" (do-nothing floor {floor['value']:.3f})"


def _noise(noise: dict[str, Any] | None) -> str:
    tsr = (noise or {}).get("tsr") or {}
    if tsr.get("low") is None:
        return ""
    spread = f", ±{tsr['trial_std']:.3f} between trials" if "trial_std" in tsr else ""
    return f" [{tsr['low']:.3f}, {tsr['high']:.3f} over tasks{spread}]"


def _faults(faults: dict[str, Any] | None) -> str:
    if not faults:
        return ""
    recovery = faults.get("recovery") or {}
    injected = sum(kind["faults"] for kind in recovery.values())
    if not injected:
        return f"; tool faults {faults['spec']}: none drawn"
    share = {
        name: sum(kind[name] * kind["faults"] for kind in recovery.values()) / injected
        for name in ("recovered_rate", "false_success_rate")
    }
    return (
        f"; tool faults {faults['spec']}: {injected} injected, "
        f"{share['recovered_rate']:.0%} recovered, {share['false_success_rate']:.0%} false success"
    )
