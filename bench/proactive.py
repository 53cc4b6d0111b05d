"""Benchmark: ProactiveEval synthesis throughput and the local judges' agreement with people.

1. Synthesis with local roles: environments per second through the whole path (one
   checkpointed thread per environment, every stage checkpointed), on SQLite and in memory,
   and a re-run that reads the finished threads back; the tiers and rounds it produced.
2. The local judges against the team-labelled sample (``data/samples/proactive/labelled/``):
   quadratic weighted kappa of the guidance and target-planning scores, Cohen's kappa of
   sub-target coverage, on the held-out half (what the validity cards report) and, for
   reference only, on the half the maps were fit on; seconds per dialogue and per plan.
3. The two tasks with local roles and the local reference agent on the bundled sample: seconds
   per environment and run (target planning; dialogue guidance at each agreeableness), and the
   full table, mean +- std over ``--runs`` runs, overall and by domain, tier and agreeableness.
   An LLM agent or user (``--agent``/``--user``, e.g. a local server) runs one domain file only
   (a 2-core local model takes hours over the whole sample).

Figures only; nothing here is a test. ``python -m bench.proactive [--n 60] [--runs 3]``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench.internals import (
    GUIDANCE_JUDGE,
    PROJECT_ROOT,
    TARGET_DENSITY,
    TARGET_PLANNING_JUDGE,
    TARGET_REACHED,
    ProactiveItem,
    calibration_half,
    cohen_kappa,
    get_embedder,
    kappa_interval,
    load_guidance_dialogues,
    load_proactive,
    load_target_plans,
    only_records,
    weighted_kappa,
)
from todeval.graphs.api import (
    Context,
    run_dialogue_guidance,
    run_target_planning,
    synthesize_proactive,
)

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
        GUIDANCE_JUDGE.judge("local"),
        TARGET_DENSITY.judge("local"),
        TARGET_PLANNING_JUDGE.judge("local"),
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
    reached = TARGET_REACHED.judge("local")
    labelled = [d for d in dialogues if d.target_reached is not None]
    said = [
        reached.check(items[d.environment_id].reference, d.messages).reached is True
        for d in labelled
    ]
    print(
        "local judges vs the todeval team's labels (paper's GPT-4o: 0.826 planning, 0.721 guidance)"
    )
    _report("guidance (quadratic)", halves, weighted_kappa)
    _report("planning (quadratic)", plan_halves, weighted_kappa)
    _report("sub-target coverage (Cohen)", covered, cohen_kappa)
    gold = [bool(d.target_reached) for d in labelled]
    print(
        f"  target reached (Cohen), all {len(gold)} labelled dialogues: "
        f"kappa={cohen_kappa(said, gold):.3f}  (in-sample: its agreement words were written "
        "after reading them)"
    )
    print(
        f"  seconds per dialogue (guidance + density): {per_dialogue:.4f}; per plan: {per_plan:.4f}"
    )


def _mean_std(figure: dict[str, Any]) -> str:
    if figure["mean"] is None:
        return "n/a"
    return f"{figure['mean']:.2f}" + ("" if figure["std"] is None else f" +- {figure['std']:.2f}")


def _table(summary: dict[str, Any]) -> None:
    names = list(summary["figures"])
    print("    " + " | ".join(["group", *names]))
    print("    " + " | ".join(["all", *(_mean_std(summary["figures"][n]) for n in names)]))
    for key, groups in summary["by"].items():
        for value, found in groups.items():
            cells = [f"{key}={value}", *(_mean_std(found[n]) for n in names)]
            print("    " + " | ".join(cells))


def tasks(runs: int, agent: str | None, user: str | None) -> None:
    """Seconds per environment and run of each task, and the full table (see the module doc)."""
    get_embedder().embed(["warm up"])  # model load is not task time
    context = Context() if user is None else Context(judges={"user_simulator": user})
    source = SAMPLE if agent is None and user is None else SAMPLE / "recommendation" / "eval.json"
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        checkpoints = str(root / "ck.sqlite")
        started = time.perf_counter()
        extra: dict[str, Any] = {} if agent is None else {"agent": agent}
        plan = run_target_planning(
            source, context, out=root / "plan", runs=runs, checkpoints=checkpoints, **extra
        )
        seconds = time.perf_counter() - started
        n = plan["counts"]["runs"]
        print(f"target planning: {n} runs in {seconds:.2f} s, {seconds / n:.4f} s per env and run")
        _table(plan)
        started = time.perf_counter()
        guide = run_dialogue_guidance(
            source, context, out=root / "guide", runs=runs, checkpoints=checkpoints, **extra
        )
        seconds = time.perf_counter() - started
        n = guide["counts"]["runs"]
        print(
            f"dialogue guidance: {n} dialogues in {seconds:.2f} s, {seconds / n:.4f} s per "
            f"env, tier and run (every turn checkpointed in SQLite)"
        )
        _table(guide)
        started = time.perf_counter()
        run_dialogue_guidance(
            source, context, out=root / "again", runs=runs, checkpoints=checkpoints, **extra
        )
        print(f"  re-run reading the finished threads back: {time.perf_counter() - started:.2f} s")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=60, help="environments to synthesise")
    parser.add_argument("--runs", type=int, default=3, help="runs of each task")
    parser.add_argument("--agent", default=None, help="agent spec (default: reference agent)")
    parser.add_argument("--user", default=None, help="simulated user spec (default: local)")
    args = parser.parse_args(argv)
    synthesis(args.n)
    agreement()
    tasks(args.runs, args.agent, args.user)


if __name__ == "__main__":
    main()
