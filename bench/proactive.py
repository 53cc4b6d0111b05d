"""Benchmark: ProactiveEval synthesis throughput and the local judges' agreement with people.

1. Synthesis with local roles: environments per second through the whole path (one
   checkpointed thread per environment, every stage checkpointed), on SQLite and in memory,
   and a re-run that reads the finished threads back; the tiers and rounds it produced.
2. The local judges against the team-labelled sample (``data/samples/proactive/labelled/``):
   quadratic weighted kappa of the guidance and target-planning scores, Cohen's kappa of
   sub-target coverage, on the held-out half (what the validity cards report) and, for
   reference only, on the half the maps were fit on; seconds per dialogue and per plan.

Figures only; nothing here is a test. ``python -m bench.proactive [--n 60]``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from evals.datasets.proactive import load_proactive
from evals.datasets.proactive_labels import load_guidance_dialogues, load_target_plans, only_records
from evals.metrics.agreement import cohen_kappa, weighted_kappa
from evals.metrics.proactive.agreement import calibration_half, kappa_interval
from evals.proactive_schema import ProactiveItem
from graphs.corpus.proactive import synthesize_proactive
from nodes.context import Context
from nodes.proactive.judges.guidance_judge import guidance_judge
from nodes.proactive.judges.target_density import target_density_judge
from nodes.proactive.judges.target_planning_judge import target_planning_judge
from stores.embeddings import get_embedder
from stores.paths import PROJECT_ROOT

SAMPLE = PROJECT_ROOT / "data" / "samples" / "proactive"


def synthesis(n: int) -> None:
    """Throughput of local synthesis: SQLite (embedding cache as found, then warm), in memory,
    and a re-run that reads the finished threads back."""
    get_embedder().embed(["warm up"])  # model load is not synthesis time
    runs = (
        ("sqlite, embedding cache as found", "a.sqlite"),
        ("sqlite, embedding cache warm", "b.sqlite"),
        ("in-memory checkpoints, warm", ":memory:"),
        ("re-run of the first: threads read back", "a.sqlite"),
    )
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        for i, (label, target) in enumerate(runs):
            checkpoints = target if target == ":memory:" else str(root / target)
            started = time.perf_counter()
            summary = synthesize_proactive(
                n, 11, Context(), out=root / str(i), checkpoints=checkpoints
            )
            seconds = time.perf_counter() - started
            print(
                f"synthesis ({label}): {n} environments in {seconds:.2f} s, {n / seconds:.1f} env/s"
            )
        print(
            f"  kept {summary['counts']['kept']}, tiers {summary['by_tier']}, rounds "
            f"{summary['refinement_rounds']}, mean hits by round {summary['mean_hits_by_round']}"
        )


def _report(
    name: str, halves: dict[str, tuple[list[Any], list[Any]]], kappa: Callable[..., Any]
) -> None:
    for half in ("held_out", "fit"):
        judged, gold = halves[half]
        value = kappa(judged, gold)
        interval = kappa_interval(judged, gold) if kappa is weighted_kappa else ""
        note = "" if half == "held_out" else "  (in-sample: the map or cut points were fit here)"
        print(f"  {name} {half:8s} n={len(gold):3d} kappa={value:.3f} {interval}{note}")


def agreement() -> None:
    """The local judges' kappas on the labelled sample, by half, and their speed."""
    items = {x.eval_id: x for x in load_proactive(SAMPLE) if isinstance(x, ProactiveItem)}
    dialogues = only_records(
        load_guidance_dialogues(SAMPLE / "labelled" / "guidance_dialogues.jsonl")
    )
    plans = only_records(load_target_plans(SAMPLE / "labelled" / "target_plans.jsonl"))
    guide, density, planning = (
        guidance_judge("local"),
        target_density_judge("local"),
        target_planning_judge("local"),
    )
    halves: dict[str, tuple[list[Any], list[Any]]] = {"held_out": ([], []), "fit": ([], [])}
    covered: dict[str, tuple[list[Any], list[Any]]] = {"held_out": ([], []), "fit": ([], [])}
    started = time.perf_counter()
    for d in dialogues:
        item, half = items[d.environment_id], calibration_half(d.environment_id)
        verdict = guide.judge(item.environment, item.reference, d.messages)
        halves[half][0].append(verdict.overall)
        halves[half][1].append(d.scores.overall if d.scores else None)
        agent = [m.content for m in d.messages if m.role == "assistant"]
        which = density.count(item.reference.sub_target, agent).coverage(len(item.sub_target)) or []
        for i in range(len(item.sub_target)):
            covered[half][0].append(i in which)
            covered[half][1].append(i in (d.sub_targets_covered or []))
    per_dialogue = (time.perf_counter() - started) / len(dialogues)
    plan_halves: dict[str, tuple[list[Any], list[Any]]] = {"held_out": ([], []), "fit": ([], [])}
    started = time.perf_counter()
    for p in plans:
        item, half = items[p.environment_id], calibration_half(p.environment_id)
        verdict = planning.judge(item.domain, item.environment, item.reference, p.plan)
        plan_halves[half][0].append(verdict.score)
        plan_halves[half][1].append(p.score)
    per_plan = (time.perf_counter() - started) / len(plans)
    print(
        "local judges vs the todeval team's labels (paper's GPT-4o: 0.826 planning, 0.721 guidance)"
    )
    _report("guidance (quadratic)", halves, weighted_kappa)
    _report("planning (quadratic)", plan_halves, weighted_kappa)
    _report("sub-target coverage (Cohen)", covered, cohen_kappa)
    print(
        f"  seconds per dialogue (guidance + density): {per_dialogue:.4f}; per plan: {per_plan:.4f}"
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=60, help="environments to synthesise")
    args = parser.parse_args(argv)
    synthesis(args.n)
    agreement()


if __name__ == "__main__":
    main()
