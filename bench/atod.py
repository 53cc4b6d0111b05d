"""Benchmark: ATOD's synthetic benchmark and its trackers (``make bench``; figures, not a test).

1. Synthesis (paper 000, §4) from SGD train with the local roles: the co-occurrence graph's
   statistics beside Tables 7-8, the time to build the episode library, dialogues per second
   of the synthesis graph, class counts and rejections.
2. Trackers on the generated set (Table 3's layout): goal detection F1 and status accuracy per
   complexity class for ATOD's tracker and each baseline, all with the local reader, and the
   per-utterance latency (p50).
3. Figure 4: prompt tokens and LLM calls per utterance of each tracker with LLM prompts, sent to
   ``tests.fakes.ScriptedChatModel`` (its tokens are whitespace words) on the first
   ``--token-dialogues`` dialogues; its latency is the framework's, not a provider's.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any
from unittest import mock

from bench.internals import (
    GOAL_EXTRACTION,
    baseline_judges,
    default_source,
    episode_library,
    llm_module,
)
from tests.fakes import ScriptedChatModel
from todeval.graphs.api import (
    GOAL_TRACKERS,
    Context,
    fmt_figure,
    goal_tracking_corpus,
    synthesize_atod,
)

SPEC = "openai:token-counter"
#: One reply every prompt accepts (each output model ignores the others' keys).
ANY_ANSWER = '{"goals": [], "links": [], "updates": [], "summary": "none", "memos": []}'


def synthesis_figures(n: int, seed: int, out: Path, source: Path) -> dict[str, Any]:
    """Synthesise ``n`` dialogues; print the graph beside the paper and the throughput."""
    started = time.perf_counter()
    episode_library(str(source))
    built = time.perf_counter() - started
    started = time.perf_counter()
    summary = synthesize_atod(n, seed=seed, out=out, source=source, checkpoints=":memory:")
    elapsed = time.perf_counter() - started
    print(f"== synthesis: {n} dialogues from {source.name}, seed {seed} ==")
    print(f"episode library and co-occurrence graph built in {built:.1f} s")
    accepted = sum(summary["counts"]["accepted"].values())
    print(f"synthesis graph: {accepted} dialogues in {elapsed:.2f} s = {accepted / elapsed:.1f}/s")
    print(f"classes: {summary['counts']['accepted']}; rejected attempts: "
          f"{summary['rejections']['by_stage']} (quality checks "
          f"{summary['rejections']['quality_checks']})")  # fmt: skip
    for name, figures in summary["classes"].items():
        print(f"  {name}: mean goals {figures['mean_goals']}, mean turns {figures['mean_turns']}, "
              f"turns {figures['turn_range']}, "
              f"mean dependencies {figures['mean_dependencies']}")  # fmt: skip
    print("table  statistic     paper    ours")
    for row in summary["co_occurrence"]["versus_paper"]:
        print(f"{row['table']:>5}  {row['statistic']:<12} {row['paper']:>7} {row['ours']:>7}"
              + (f"  ({row['note']})" if row["note"] else ""))  # fmt: skip
    return summary


def tracker_figures(dialogues: Path, out: Path, trackers: list[str]) -> dict[str, Any]:
    """Table 3's layout: detection F1 / status accuracy per class, per tracker."""
    summaries: dict[str, Any] = {}
    print("\n== trackers on the generated set (local reader) ==")
    print(f"{'tracker':<13} {'class':<8} {'dialogues':>9} {'F1':>7} {'status':>7} {'p50 ms':>8}")
    for tracker in trackers:
        context = Context(
            settings={"goal_tracking": {"tracker": tracker, "vector_backend": "memory"}}
        )
        summary = goal_tracking_corpus(
            dialogues, "atod", context, out=out / tracker, checkpoints=":memory:"
        )
        summaries[tracker] = summary
        for name, row in (summary["by_complexity_class"] or {}).items():
            print(f"{tracker:<13} {name:<8} {row['n_dialogues']:>9} "
                  f"{fmt_figure(row['goal_detection_f1']):>7} "
                  f"{fmt_figure(row['status_accuracy']):>7} "
                  f"{fmt_figure(row['latency_ms_p50']):>8}")  # fmt: skip
    return summaries


def validity_figures(summary: dict[str, Any]) -> None:
    """Table 5: each metric's correlation with dGCR over the dialogues (ATOD's tracker)."""
    print("\n== Table 5: correlation with dGCR over dialogues (atod tracker, local judges) ==")
    print(f"memory recall over the state {fmt_figure(summary['memory_recall_state_accuracy'])}, "
          f"by aspect {summary['memory_recall_by_aspect']}; proactivity effectiveness "
          f"{summary['proactivity_effectiveness']}")  # fmt: skip
    for name, row in summary["metric_validity"].items():
        why = f"  ({row['reason']})" if row["reason"] else ""
        print(f"{name:<28} r {fmt_figure(row['pearson']):>7}  rho {fmt_figure(row['spearman']):>7}"
              f"  n {row['n_dialogues']}{why}")  # fmt: skip
    print("response quality: not measured (an LLM role; no local judge scores it)")


def token_figures(dialogues: Path, out: Path, trackers: list[str], limit: int) -> None:
    """Figure 4: prompt tokens and calls per utterance with LLM prompts (a counting fake)."""
    print(f"\n== Figure 4: LLM prompts per utterance, first {limit} dialogues (fake model) ==")
    print(f"{'tracker':<13} {'calls/utt':>9} {'words/utt':>9} {'at utt 10':>9} "
          f"{'at utt 30':>9} {'p50 ms':>8}")  # fmt: skip
    model = ScriptedChatModel(fallback=ANY_ANSWER)
    with mock.patch.object(llm_module, "load_chat_model", lambda spec, **kw: model):
        for tracker in trackers:
            GOAL_EXTRACTION.cache_clear()
            baseline_judges.cache_clear()
            context = replace(
                Context(
                    settings={"goal_tracking": {"tracker": tracker, "vector_backend": "memory"}}
                ),
                goal_extraction_judge=SPEC,
            )
            summary = goal_tracking_corpus(
                dialogues, "atod", context, out=out / f"llm-{tracker}", checkpoints=":memory:",
                limit=limit,
            )  # fmt: skip
            by_turn = summary["prompt_tokens_by_turn"] or {}
            print(f"{tracker:<13} {fmt_figure(summary['llm_calls_per_turn']):>9} "
                  f"{fmt_figure(summary['prompt_tokens_per_turn']):>9} "
                  f"{fmt_figure(by_turn.get(10, by_turn.get('10'))):>9} "
                  f"{fmt_figure(by_turn.get(30, by_turn.get('30'))):>9} "
                  f"{fmt_figure(summary['latency_ms_p50']):>8}")  # fmt: skip


def main() -> None:
    """Print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=40, help="dialogues to synthesise")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--source", type=Path, default=None, help="SGD file (default: train)")
    parser.add_argument("--token-dialogues", type=int, default=4)
    args = parser.parse_args()
    trackers = list(GOAL_TRACKERS)
    with tempfile.TemporaryDirectory(prefix="todeval-bench-atod-") as tmp:
        out = Path(tmp)
        synthesis_figures(args.n, args.seed, out / "set", args.source or default_source())
        dialogues = out / "set" / "dialogues.jsonl"
        summaries = tracker_figures(dialogues, out, trackers)
        validity_figures(summaries["atod"])
        token_figures(dialogues, out, trackers, args.token_dialogues)


if __name__ == "__main__":
    main()
