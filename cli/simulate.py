"""``todeval simulate``: an agent under test talks to a simulated user over a domain's tasks.

The work is :func:`graphs.corpus.simulation.simulate_corpus` (re-exported by
:mod:`graphs.api`); this module parses, shows progress and prints one line.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from todeval.cli.common import (
    add_judge_arguments,
    add_llm_arguments,
    command_judges,
    count,
    fmt_figure,
    input_path,
    progress,
    uses_llm,
    with_llm_settings,
    writable_folder,
)
from todeval.graphs.api import SIMULATION_DOMAINS, Context, SimulationSettings, simulate_corpus


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
    parser.add_argument("--domain", required=True, choices=SIMULATION_DOMAINS)
    parser.add_argument(
        "--agent",
        required=True,
        metavar="SPEC",
        help="the agent under test: provider:model (tool calling), "
        "openai:model@http://host/v1, replay:RESULTS.json, graph:package.module:graph, "
        "python:package.module:function or a LangGraph server assistant",
    )
    add_judge_arguments(parser, ["user_simulator"], aliases={"--user": "user_simulator"})
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
    parser.add_argument("--out", required=True, type=writable_folder, help="output folder")
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
        help="conversations at once (default: --llm-concurrency with an LLM agent or user, else 1)",
    )
    add_llm_arguments(parser, dry_run=False)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Simulate, score, print one line."""
    context = with_llm_settings(
        Context(
            judges=command_judges(args),
            settings={
                "simulation": {
                    "agent": args.agent,
                    "max_steps": args.max_steps,
                    "agent_max_output_tokens": args.agent_max_tokens,
                    "agent_fold_tool_results": args.fold_tool_results,
                }
            },
        ),
        args,
    )
    concurrency = args.max_concurrency or (context.llm.max_concurrency if uses_llm(context) else 1)
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
    return 0 if summary["simulation"]["counts"]["conversations"] else 1


def one_line(summary: dict[str, Any], out: Path) -> str:
    """The last line a run prints."""
    simulation = summary["simulation"]
    counts = simulation["counts"]
    causes = simulation["attribution"]["counts"]
    pass_1 = (summary.get("pass_hat_k") or {}).get("1")
    return (
        f"simulated {counts['conversations']} conversations: TSR {fmt_figure(summary.get('tsr'))}"
        f", pass^1 {fmt_figure(pass_1)}; failures by agent {causes.get('agent', 0)}, user "
        f"simulator {causes.get('user_simulator', 0)}, environment "
        f"{causes.get('environment', 0)}; {counts['skipped_records']} skipped, "
        f"{counts['failed_conversations']} failed; wrote {out / 'results.json'}, "
        f"{out / 'summary.json'} and {out / 'report.html'}"
    )
