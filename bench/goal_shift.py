"""Benchmark: goal-shift metrics on the shared 40-conversation AgentChangeBench banking run.

Prints every summary field in default and ``--compat upstream`` mode; the pooled figures beside
their macro averages over personas, tasks, domains and goal sequences (paper 002 Section 4.3),
with the stored judgments and with the local judges (where the two NL-assertion denominators
part); the calls where todeval's schema rule for parameter validity and upstream's keyword rule
disagree; the agreement of the local shift-detection and NL-assertion judges with the stored
LLM-judge outputs, and the seconds per 1,000 conversations of the whole ``todeval goal-shift``
path (load, one checkpointed graph thread per conversation, summary), with the 40
conversations replicated to 1,000 under new ids (``--macro-only`` stops after the tables).
Figures only; nothing here is a test.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.internals import (
    NL_ASSERTION,
    SHIFT_DETECTION,
    Context,
    Conversation,
    GoalShiftRun,
    data_dir,
    goal_shift_summary,
    load_goal_shift_run,
    pooled_macro_table,
    score_run,
)

RUN = data_dir() / "agentchangebench" / "simulations" / "banking_gpt-4.1_run40.json"
PERSONAS = data_dir() / "agentchangebench" / "domains" / "banking" / "user_personas.json"
TOP_FIELDS = (
    "conversations",
    "tsr",
    "tue",
    "tool_correctness",
    "param_validity",
    "num_tool_calls",
    "tcrr",
    "tcrr_window",
    "tcrr_batch",
    "num_redundant",
)


def load(path: Path) -> GoalShiftRun:
    """The run, personas named from the domain's persona file."""
    personas = json.loads(PERSONAS.read_text()) if PERSONAS.exists() else None
    return load_goal_shift_run(path, personas=personas)


def fmt(value: Any) -> str:
    """Numbers to 4 decimals, the rest as JSON."""
    if isinstance(value, float):
        return f"{value:.4f}"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {fmt(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


def print_summary(label: str, summary: dict[str, Any]) -> None:
    """Every contract field, breakdowns one line per group."""
    print(f"\n== {label}")
    for key in TOP_FIELDS:
        print(f"  {key}: {fmt(summary[key])}")
    print(f"  tsr_channels: {fmt(summary['tsr_channels'])}")
    print(f"  gsrt: {fmt(summary['gsrt'])}")
    print(f"  pass_hat_k: {fmt(summary['pass_hat_k'])}")
    for name in ("by_domain", "by_persona"):
        for group, figures in summary[name].items():
            part = {k: figures[k] for k in ("conversations", "tsr", "tue", "tcrr")}
            gsrt = figures["gsrt"]
            print(
                f"  {name}[{group}]: {fmt(part)} recovery {fmt(gsrt['recovery_rate'])} "
                f"transfer {fmt(gsrt['transfer_rate'])} shifts {gsrt['shifts']}"
            )
    by_task = summary["by_task"]
    print(f"  by_task: {len(by_task)} tasks; by_goal_sequence: {len(summary['by_goal_sequence'])}")


def score(goal_run: GoalShiftRun, context: Context, checkpoints: str) -> list[dict[str, Any]]:
    """Every conversation through the checkpointed graph, as ``todeval goal-shift`` does."""
    tally, _ = score_run(goal_run, context, out=None, checkpoints=checkpoints)
    if tally.skipped or tally.failed:
        print(f"  ({len(tally.skipped)} skipped, {len(tally.failed)} failed)")
    return tally.rows


def pooled_vs_macro(goal_run: GoalShiftRun) -> None:
    """Pooled and macro-averaged figures, stored judgments and local judges, both compat modes."""
    for label, context in (
        ("stored LLM judgments", Context()),
        (
            "local judges (stored judgments not reused)",
            Context(settings={"goal_shift": {"reuse_judgments": False}}),
        ),
    ):
        rows = score(goal_run, context, ":memory:")
        for compat in ("none", "upstream"):
            summary = goal_shift_summary(rows, compat=compat)  # type: ignore[arg-type]
            nl = summary["nl_assertions"]
            print(
                f"\n== pooled vs macro, {label}, compat {compat}: NL assertions {nl['total']} "
                f"({nl['undecided']} undecided; channel = {nl['rule']})"
            )
            print(pooled_macro_table(summary))
    summary = goal_shift_summary(score(goal_run, Context(), ":memory:"))
    differences = summary["param_validity_differences"]
    print(
        f"\n== parameter validity, schema rule {fmt(summary['param_validity'])} vs upstream's "
        f"keyword rule {fmt(summary['param_validity_upstream'])}: {len(differences)} calls differ"
    )
    for difference in differences:
        print(f"  {difference['dialogue_id']}/{difference['call_id']}: {difference['reason']}")


def replicate(path: Path, target: int, folder: Path) -> Path:
    """The results file with its simulations copied under new ids up to ``target``."""
    results = json.loads(path.read_text())
    original = results["simulations"]
    copies = []
    for i in range(target):
        simulation = copy.deepcopy(original[i % len(original)])
        simulation["id"] = f"{simulation['id']}-copy{i}"
        copies.append(simulation)
    results["simulations"] = copies
    out = folder / f"run{target}.json"
    out.write_text(json.dumps(results))
    return out


def judge_agreement(goal_run: GoalShiftRun) -> None:
    """Local judges against the stored LLM-judge outputs (gsrt_v2, nl_assertions)."""
    detector, nl_judge = SHIFT_DETECTION.judge("local"), NL_ASSERTION.judge("local")
    conversations = [r for r in goal_run.records if isinstance(r, Conversation)]
    count = pairs = exact = recovered = judged = agreed = 0
    started = time.perf_counter()
    for conversation in conversations:
        stored = conversation.stored.shifts or []
        local = detector.detect(conversation).shifts or []
        count += len(stored) == len(local)
        for a, b in zip(stored, local, strict=False):
            pairs += 1
            exact += a.turn == b.turn
            recovered += (a.acknowledgment_turn is not None and not a.transferred_to_human) == (
                b.acknowledgment_turn is not None and not b.transferred_to_human
            )
        verdict = nl_judge.judge(conversation)
        for s, j in zip(conversation.stored.nl_assertions or [], verdict.judgments, strict=False):
            if j.met is not None:
                judged += 1
                agreed += s.met == j.met
    elapsed = time.perf_counter() - started
    total = sum(len(c.task.nl_assertions) for c in conversations if c.task)
    print(
        f"\n== local judges vs stored GPT-5 judge outputs ({len(conversations)} conversations)\n"
        f"  shift count agrees {count}/{len(conversations)}; of {pairs} paired shifts: shift "
        f"turn exact {exact}, recovery verdict agrees {recovered}\n"
        f"  NL assertions judged locally {judged}/{total}, agree with stored {agreed}/{judged}\n"
        f"  {elapsed:.1f} s (MiniLM load included)"
    )


def main() -> None:
    """Both modes on the 40-conversation run, judge agreement, then throughput at 1,000."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--run", type=Path, default=RUN)
    parser.add_argument("--conversations", type=int, default=1000)
    parser.add_argument("--macro-only", action="store_true", help="only the pooled-vs-macro tables")
    args = parser.parse_args()
    if not args.run.exists():
        print(f"{args.run} not found: set TODEVAL_DATA_DIR")
        return
    print(f"machine: {os.cpu_count()} cores; run: {args.run.name}")
    goal_run = load(args.run)
    pooled_vs_macro(goal_run)
    if args.macro_only:
        return
    rows = score(goal_run, Context(), ":memory:")
    print_summary("default (per conversation)", goal_shift_summary(rows))
    print_summary("--compat upstream", goal_shift_summary(rows, compat="upstream"))
    judge_agreement(goal_run)
    with tempfile.TemporaryDirectory(prefix="todeval-bench-") as tmp:
        big = replicate(args.run, args.conversations, Path(tmp))
        for checkpoints in (":memory:", str(Path(tmp) / "checkpoints.sqlite")):
            started = time.perf_counter()
            many = load(big)
            loaded = time.perf_counter()
            rows = score(many, Context(), checkpoints)
            scored = time.perf_counter()
            goal_shift_summary(rows)
            goal_shift_summary(rows, compat="upstream")
            done = time.perf_counter()
            per = 1000 / len(rows)
            kind = "in-memory" if checkpoints == ":memory:" else "SQLite"
            print(
                f"\n== {len(rows)} conversations, stored judgments, {kind} checkpoints\n"
                f"  load {loaded - started:.2f} s, graph {scored - loaded:.2f} s, both "
                f"summaries {done - scored:.2f} s; {(done - started) * per:.2f} s per 1,000 "
                "conversations"
            )


if __name__ == "__main__":
    main()
