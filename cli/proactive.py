"""``todeval proactive plan|guide``: ProactiveEval's two tasks on an agent (paper 003).

``todeval proactive plan DATA --agent SPEC --out DIR`` asks the agent for a target and 2-4
sub-targets in every environment and scores them against the reference (Listing 11).
``todeval proactive guide DATA --agent SPEC --user SPEC --agreeableness low,medium,high --runs 3
--out DIR`` lets the agent open and lead a dialogue with a simulated user at each agreeableness
(resistance to guidance), at most 6 turns with a 3-turn memory window and an early stop when
the target is reached, then scores it (Listing 12) and counts target density (Listing 13).

DATA is a release-layout folder (``<domain>/{eval,fair,hard}.json``), one domain folder or one
JSON file. Both write ``DIR/results.jsonl`` (one line per environment and run),
``DIR/summary.json`` (mean and std over the runs, by domain, tier and agreeableness) and
``DIR/report.html``. Without ``--agent`` the local reference agent runs (offline). The work is
:mod:`graphs.corpus.proactive`; this module parses, shows progress and prints.
"""

from __future__ import annotations

import argparse
from typing import Any

from todeval.cli.common import (
    UsageError,
    add_judge_arguments,
    add_llm_arguments,
    add_renamed_option,
    count,
    given_judges,
    input_path,
    progress,
    with_llm_settings,
    writable_folder,
)
from todeval.graphs.api import (
    PROACTIVE_AGREEABLENESS,
    REFERENCE_GUIDE_AGENT,
    REFERENCE_PLAN_AGENT,
    Context,
    run_dialogue_guidance,
    run_target_planning,
)


def add_parser(subparsers: Any) -> None:
    """Register ``proactive`` and its sub-verbs ``plan`` and ``guide``."""
    parser = subparsers.add_parser(
        "proactive",
        help="ProactiveEval target planning and dialogue guidance on an agent (paper 003)",
        description="Run ProactiveEval's two tasks on an agent under test.",
    )
    verbs = parser.add_subparsers(dest="verb", metavar="TASK", required=True)
    plan = verbs.add_parser(
        "plan",
        help="the agent plans a target and sub-targets; judged against the reference",
        description="Target planning: the agent answers Listing 4 for every environment; the "
        "target-planning judge (Listing 11) scores it 1-10 against the reference.",
    )
    _common(plan, REFERENCE_PLAN_AGENT, runs=1, roles=["target_planning"])
    plan.set_defaults(run=run_plan)
    guide = verbs.add_parser(
        "guide",
        help="the agent leads a simulated user to the reference target",
        description="Dialogue guidance: the agent opens and leads a simulated user (at each "
        "agreeableness) toward the reference target, at most --max-turns turns with a 3-turn "
        "memory window, stopping early when the target is reached; then Listings 12 and 13.",
    )
    _common(
        guide,
        REFERENCE_GUIDE_AGENT,
        runs=3,
        roles=GUIDE_ROLES,
        user=True,
    )
    guide.add_argument(
        "--agreeableness",
        default=",".join(PROACTIVE_AGREEABLENESS),
        help="comma list of the user's tiers (default %(default)s)",
    )
    guide.add_argument("--max-turns", type=count, default=6, help="turn limit (default 6)")
    guide.set_defaults(run=run_guide)


def _common(
    parser: argparse.ArgumentParser,
    agent: str,
    *,
    runs: int,
    roles: list[str],
    user: bool = False,
) -> None:
    parser.add_argument("data", type=input_path, metavar="DATA", help="release folder or file")
    parser.add_argument("--agent", default=agent, help="agent spec (default %(default)s)")
    parser.add_argument("--out", required=True, type=writable_folder, help="output folder")
    parser.add_argument("--runs", type=count, default=runs, help="runs (default %(default)s)")
    add_judge_arguments(parser, roles, user=user)
    parser.add_argument(
        "--max-concurrency", dest="concurrency", type=count, default=1, help="runs at once"
    )
    add_renamed_option(parser, "--concurrency", "--max-concurrency", dest="concurrency", type=count)
    parser.add_argument(
        "--checkpoints",
        default=None,
        help="SQLite file or postgresql://user@host:port/db (shared by workers; the cluster extra) "
        "for the checkpoints (default .todeval/checkpoints.sqlite; ':memory:' for none)",
    )
    add_llm_arguments(parser, dry_run=False)


GUIDE_ROLES = ["guidance", "target_density", "target_reached", "user_simulator"]
"""The roles dialogue guidance runs (target planning runs ``target_planning``)."""


def task_context(args: argparse.Namespace) -> Context:
    """The run's Context from ``--judge``, ``--user`` and the LLM flags."""
    return with_llm_settings(Context(judges=given_judges(args)), args)


def agreeableness_tiers(raw: str) -> list[Any]:
    """The comma list of tiers, checked."""
    tiers = [t.strip().lower() for t in raw.split(",") if t.strip()]
    unknown = [t for t in tiers if t not in PROACTIVE_AGREEABLENESS]
    if not tiers or unknown:
        known = ", ".join(PROACTIVE_AGREEABLENESS)
        raise UsageError(f"--agreeableness {raw!r}: expected a comma list of {known}")
    return tiers


def run_plan(args: argparse.Namespace) -> int:
    """Target planning; prints one line."""
    summary = run_target_planning(
        args.data,
        task_context(args),
        out=args.out,
        agent=args.agent,
        runs=args.runs,
        checkpoints=args.checkpoints,
        max_concurrency=args.concurrency,
        progress=progress,
    )
    print(one_line(summary, args.out))
    return 0


def run_guide(args: argparse.Namespace) -> int:
    """Dialogue guidance; prints one line."""
    summary = run_dialogue_guidance(
        args.data,
        task_context(args),
        out=args.out,
        agent=args.agent,
        agreeableness=agreeableness_tiers(args.agreeableness),
        runs=args.runs,
        max_turns=args.max_turns,
        checkpoints=args.checkpoints,
        max_concurrency=args.concurrency,
        progress=progress,
    )
    print(one_line(summary, args.out))
    return 0


def one_line(summary: dict[str, Any], out: Any) -> str:
    """``<task>: score mean ± std over N runs of M environments -> OUT``."""
    score = summary["figures"]["score"]
    counts = summary["counts"]
    spread = "" if score["std"] is None else f" ± {score['std']}"
    floor = (summary.get("floors") or {}).get("score") or {}
    if floor.get("value") is not None:
        spread += f" (do-nothing floor {floor['value']:.2f})"
    return (
        f"{summary['task']}: score {score['mean']}{spread} ({counts['runs']} runs, "
        f"{counts['environments']} environments, {counts['failed']} failed) -> {out}"
    )
