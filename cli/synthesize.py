"""``todeval synthesize``: write evaluation data with a paper's synthesis pipeline.

``todeval synthesize proactive --n N --seed S --out DIR`` runs ProactiveEval's pipeline (paper
003: topic tree, environment, n candidate targets, ensemble, difficulty check with obfuscation
and noise, final check, Fair/Hard tiers) and writes ``DIR/dataset/<domain>/{eval,fair,hard}.json``
with ``DIR/synthesis.jsonl``, ``DIR/summary.json`` and ``DIR/report.html``.

``todeval synthesize atod --n N --seed S --out DIR`` runs ATOD's pipeline (paper 000, §4: goal
co-occurrence graph of SGD -> stratified random walks -> annotation -> generation -> turn-level
statuses -> quality checks) and writes ``DIR/dialogues.jsonl`` (Listings 1-2 with
``complexity_class``, read by ``todeval track-goals``) and ``DIR/summary.json``.

The work is :mod:`graphs.corpus.proactive` and :mod:`graphs.corpus.goal_tracking_synthesis`;
this module parses, shows progress and prints.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
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
    PROACTIVE_DOMAINS,
    Context,
    GoalTrackingSettings,
    ProactiveSettings,
    canonical_domain,
    synthesize_atod,
    synthesize_proactive,
)


def add_parser(subparsers: Any) -> None:
    """Register ``synthesize`` and its sub-verbs (``proactive``, ``atod``)."""
    parser = subparsers.add_parser(
        "synthesize",
        help="write evaluation data with a paper's synthesis pipeline (proactive, atod)",
        description="Write evaluation data with a paper's own synthesis pipeline.",
    )
    verbs = parser.add_subparsers(dest="verb", metavar="PIPELINE", required=True)
    _add_proactive(verbs)
    _add_atod(verbs)


def _add_proactive(verbs: Any) -> None:
    defaults = Context()
    parser = verbs.add_parser(
        "proactive",
        help="ProactiveEval environments in the release layout (paper 003)",
        description=(
            "Synthesise ProactiveEval environments: topic tree -> environment -> "
            f"{ProactiveSettings.of(defaults).synthesis_candidates} candidate targets -> ensemble "
            "-> difficulty check "
            "by a panel, with obfuscation and noise while a majority still finds the target -> "
            "final check by a panel -> Fair/Hard tiers. Local roles by default (templates over "
            "todeval's own topic tree: a stand-in that exercises the pipeline); LLM specs run "
            "the paper's Listings 2-10. Writes OUT/dataset/<domain>/{eval,fair,hard}.json, "
            "OUT/synthesis.jsonl, OUT/summary.json and OUT/report.html."
        ),
    )
    _add_run_arguments(parser, "environments to attempt")
    parser.add_argument(
        "--domains",
        default=",".join(PROACTIVE_DOMAINS),
        help="comma list of domains, written in turn (default: the paper's six)",
    )
    add_judge_arguments(
        parser,
        ["synthesis_writer", "target_prediction", "difficulty", "final_check"],
        aliases={
            "--writer": "synthesis_writer",
            "--difficulty-panel": "target_prediction",
            "--difficulty-judge": "difficulty",
            "--final-check-panel": "final_check",
        },
    )
    parser.add_argument("--candidates", type=count, default=None, help="candidate targets (5)")
    parser.add_argument(
        "--max-refinements", type=int, default=None, help="refinement rounds at most (5)"
    )
    parser.add_argument(
        "--max-concurrency", dest="concurrency", type=count, default=1, help="environments at once"
    )
    add_renamed_option(parser, "--concurrency", "--max-concurrency", dest="concurrency", type=count)
    _add_run_tail(parser)
    parser.set_defaults(run=run_proactive)


def _add_run_arguments(parser: argparse.ArgumentParser, items: str) -> None:
    """``--n``, ``--seed`` and ``--out``, which every pipeline takes."""
    parser.add_argument("--n", type=count, required=True, help=items)
    parser.add_argument("--seed", type=int, default=0, help="seed (default %(default)s)")
    parser.add_argument("--out", required=True, type=writable_folder, help="output folder")


def _add_run_tail(parser: argparse.ArgumentParser) -> None:
    """``--checkpoints`` and the LLM-call limits, which every pipeline takes."""
    parser.add_argument(
        "--checkpoints",
        default=None,
        help="SQLite file or postgresql://user@host:port/db (shared by workers; the cluster extra) "
        "for the checkpoints (default .todeval/checkpoints.sqlite; ':memory:' for none)",
    )
    add_llm_arguments(parser, dry_run=False)


def proactive_context(args: argparse.Namespace) -> Context:
    """The run's Context from the flags (flags not given keep the defaults)."""
    if args.max_refinements is not None and args.max_refinements < 0:
        raise UsageError(f"--max-refinements must be 0 or more, got {args.max_refinements}")
    settings = {
        "proactive.synthesis_candidates": args.candidates,
        "proactive.max_refinements": args.max_refinements,
    }
    context = Context(judges=given_judges(args)).with_flat(
        {k: v for k, v in settings.items() if v is not None}
    )
    return with_llm_settings(context, args)


def run_proactive(args: argparse.Namespace) -> int:
    """Synthesise, write the release layout, print one line."""
    domains = [canonical_domain(d) for d in args.domains.split(",") if d.strip()]
    if not domains:
        raise UsageError("--domains: expected at least one domain")
    summary = synthesize_proactive(
        args.n,
        args.seed,
        proactive_context(args),
        out=args.out,
        domains=domains,
        checkpoints=args.checkpoints,
        max_concurrency=args.concurrency,
        progress=progress,
    )
    print(one_line(summary, args.out))
    return 0 if summary["counts"]["kept"] else 1


def one_line(summary: Mapping[str, Any], out: Path) -> str:
    """The last line a run prints."""
    counts, tiers = summary["counts"], summary["by_tier"]
    return (
        f"synthesised {counts['kept']} of {counts['attempted']} environments "
        f"(eval {tiers.get('eval', 0)}, fair {tiers.get('fair', 0)}, hard {tiers.get('hard', 0)}; "
        f"{counts['rejected_by_final_check']} rejected by the final check, {counts['failed']} "
        f"failed) in {summary['elapsed_s']} s; wrote {out / 'dataset'}, "
        f"{out / 'synthesis.jsonl'}, {out / 'summary.json'}, {out / 'report.html'}"
    )


def _add_atod(verbs: Any) -> None:
    defaults = Context()
    parser = verbs.add_parser(
        "atod",
        help="ATOD dialogues with turn-level goal statuses (paper 000)",
        description=(
            "Synthesise ATOD dialogues: goal sequences of SGD -> goal co-occurrence graph -> "
            "random walks stratified by Table 9's complexity classes -> annotation (slots, "
            "dependencies, asynchrony, interleaving, proactivity, defects) -> dialogue "
            "generation -> turn-level status annotation -> quality checks. Local roles by "
            "default (real SGD utterances of the sampled goals composed into one interleaved "
            "dialogue); LLM specs run the paper's Appendix A prompts. Writes "
            "OUT/dialogues.jsonl (read by `todeval track-goals`) and OUT/summary.json."
        ),
    )
    _add_run_arguments(parser, "dialogues to draw")
    parser.add_argument(
        "--source",
        default=None,
        help="SGD compact JSONL to draw from, schema*.json beside it (default: SGD train)",
    )
    parser.add_argument(
        "--complex-share",
        type=float,
        default=None,
        help="share of complex dialogues in [0, 1] "
        f"(default {GoalTrackingSettings.of(defaults).complex_share})",
    )
    parser.add_argument(
        "--attempts",
        type=count,
        default=None,
        help="samples tried per dialogue before giving up "
        f"(default {GoalTrackingSettings.of(defaults).synthesis_attempts})",
    )
    add_judge_arguments(
        parser,
        ["trajectory_annotation", "dialogue_generation", "status_annotation"],
        aliases={
            "--annotator": "trajectory_annotation",
            "--generator": "dialogue_generation",
            "--status-annotator": "status_annotation",
        },
    )
    _add_run_tail(parser)
    parser.set_defaults(run=run_atod)


def atod_context(args: argparse.Namespace) -> Context:
    """The run's Context from the ``atod`` flags (flags not given keep the defaults)."""
    if args.complex_share is not None and not 0.0 <= args.complex_share <= 1.0:
        raise UsageError(f"--complex-share must be in [0, 1], got {args.complex_share}")
    settings = {
        "goal_tracking.synthesis_source": str(input_path(args.source)) if args.source else None,
        "goal_tracking.complex_share": args.complex_share,
        "goal_tracking.synthesis_attempts": args.attempts,
    }
    context = Context(judges=given_judges(args)).with_flat(
        {k: v for k, v in settings.items() if v is not None}
    )
    return with_llm_settings(context, args)


def run_atod(args: argparse.Namespace) -> int:
    """Synthesise, write dialogues.jsonl and summary.json, print the graph and one line."""
    summary = synthesize_atod(
        args.n,
        seed=args.seed,
        out=args.out,
        context=atod_context(args),
        checkpoints=args.checkpoints,
        progress=progress,
    )
    for line in graph_lines(summary):
        print(line)
    print(atod_line(summary, args.out))
    return 0 if sum(summary["counts"]["accepted"].values()) else 1


def graph_lines(summary: Mapping[str, Any]) -> list[str]:
    """The co-occurrence statistics beside the paper's Tables 7-8, one per line."""
    rows = summary["co_occurrence"]["versus_paper"]
    return [
        f"table {row['table']} {row['statistic']}: ours {row['ours']}, paper {row['paper']}"
        for row in rows
    ]


def atod_line(summary: Mapping[str, Any], out: Path) -> str:
    """The last line an ``atod`` run prints."""
    counts, rejections = summary["counts"], summary["rejections"]
    accepted = counts["accepted"]
    return (
        f"synthesised {sum(accepted.values())} of {sum(counts['asked'].values())} dialogues "
        f"(medium {accepted.get('medium', 0)}, complex {accepted.get('complex', 0)}; "
        f"{rejections['total']} attempts rejected, {rejections['quality_checks']} by the "
        f"quality checks; {counts['given_up']} given up) in {summary['elapsed_s']} s; wrote "
        f"{out / 'dialogues.jsonl'} and {out / 'summary.json'}"
    )
