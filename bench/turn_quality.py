"""Benchmark: the learned local turn-quality teachers and their 2-of-3 vote (``make bench``).

Figures only, nothing asserted. On the frozen failure set (``data/validation/turn_failures.jsonl``,
people's labels, reporting only) and on SGD services held out from training (labels from SGD's
acts; and failures the team made from their turns): per teacher and for the vote, failure
P/R/F1, Cohen's kappa and coverage; recall and root-cause accuracy per E-code; the vote's GSR
against the frozen set's gold (gold goal boundaries, and the default segmenter's); pairwise
Cohen's and Fleiss' kappa among the three teachers; labelling speed with a warm cache. The
old rule teachers are printed beside them for comparison. The cut-offs were chosen on SGD dev.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from itertools import combinations
from typing import Any

from bench.internals import (
    RCOF_CODES,
    SEGMENTATION,
    TURN_QUALITY,
    Dialogue,
    TurnLabel,
    cohen_kappa,
    fleiss_kappa,
    goal_spans,
    goal_success_rate,
    score_goals,
    shipped_model,
)
from scripts.turn_quality_eval import (
    FROZEN_TURNS,
    Scored,
    binary_figures,
    gold_quality,
    heldout_sgd,
    label_all,
    load_file,
    of_label,
    of_vote,
    scored_pairs,
    segment_all,
    vote_all,
)

LEARNED = ("local:turn", "local:reply-reaction", "local:fit-reaction")
RULES = ("local:signals", "local:response", "local:semantic")
Labels = list[list[TurnLabel]]


def fmt(value: float | None) -> str:
    return "  n/a" if value is None else f"{value:5.2f}"


def figure_row(name: str, scored: Sequence[Scored], labels: Sequence[Any], read: Any) -> str:
    gold, predicted, _ = scored_pairs(scored, labels, read)
    both = binary_figures(gold, predicted)
    every, judged = both["abstain_negative"], both["judged"]
    return (
        f"  {name:<24} P {fmt(every['precision'])} R {fmt(every['recall'])} "
        f"F1 {fmt(every['f1'])} kappa {fmt(every['kappa'])} coverage {fmt(every['coverage'])}"
        f" | labelled only: P {fmt(judged['precision'])} R {fmt(judged['recall'])} "
        f"kappa {fmt(judged['kappa'])}"
    )


def figures(title: str, scored: list[Scored], labels: dict[str, Labels]) -> None:
    turns = sum(len(s.gold) for s in scored)
    failed = sum(g[0] for s in scored for g in s.gold.values())
    print(f"\n{title}: {turns} turns, {failed} failed (abstentions count as not flagged)")
    dialogues = [s.dialogue for s in scored]
    for name in (*LEARNED, *RULES):
        print(figure_row(name, scored, labels[name], of_label))
    for trio, name in ((LEARNED, "vote (learned trio)"), (RULES, "vote (rule trio)")):
        votes = vote_all(dialogues, [labels[t] for t in trio])
        print(figure_row(name, scored, votes, of_vote))


def per_code(title: str, scored: list[Scored], labels: dict[str, Labels]) -> None:
    """Recall and root-cause accuracy (among caught failures) per gold code."""
    print(f"\n{title}: per E-code recall / root-cause accuracy among caught")
    columns = {name: labels[name] for name in LEARNED}
    votes = vote_all([s.dialogue for s in scored], [labels[t] for t in LEARNED])
    rows = {name: scored_pairs(scored, found, of_label) for name, found in columns.items()}
    rows["vote (learned trio)"] = scored_pairs(scored, votes, of_vote)
    print(f"  {'':<22}" + "".join(f"{code:>16}" for code in RCOF_CODES))
    for name, (gold, predicted, codes) in rows.items():
        cells = []
        for code in RCOF_CODES:
            hits = [i for i, c in enumerate(codes) if gold[i] and c[0] == code]
            caught = [i for i in hits if predicted[i]]
            right = sum(codes[i][1] == code for i in caught)
            recall = f"{len(caught) / len(hits):.2f}" if hits else " n/a"
            accuracy = f"{right / len(caught):.2f}" if caught else " n/a"
            cells.append(f"{recall}/{accuracy} ({len(hits)})".rjust(16) if hits else "-".rjust(16))
        print(f"  {name:<22}" + "".join(cells))


def gsr(
    dialogues: list[Dialogue], qualities: list[list[str | None]], starts: list[list[bool]]
) -> str:
    goals: list[dict[str, Any]] = []
    for dialogue, quality, new_goal in zip(dialogues, qualities, starts, strict=True):
        turns = [
            {"turn_number": t.turn_number, "quality": q, "rcof": None}
            for t, q in zip(dialogue.turns, quality, strict=True)
        ]
        spans = [
            {"goal_index": i, "start_turn": a, "end_turn": b}
            for i, (a, b) in enumerate(goal_spans(new_goal))
        ]
        goals += score_goals(spans, turns)
    undecided = sum(goal["success"] is None for goal in goals)
    return f"GSR {fmt(goal_success_rate(goals))} ({len(goals)} goals, {undecided} undecided)"


def gsr_figures(scored: list[Scored], labels: dict[str, Labels]) -> None:
    dialogues = [s.dialogue for s in scored]
    gold_starts = [[bool(t.is_new_goal) for t in d.turns] for d in dialogues]
    starts = {"gold goals": gold_starts}
    for spec in ("local", "local:rules"):
        try:
            segmenter = SEGMENTATION.judge(spec)
        except FileNotFoundError as missing:
            print(f"  (segmenter {spec} is not available: {missing})")
            continue
        found = segment_all(segmenter, dialogues)
        starts[f"{segmenter.name} goals"] = [[bool(x) for x in s] for s in found]
    gold_q: list[list[str | None]] = [[t.quality for t in d.turns] for d in dialogues]
    print(f"\nGSR on {FROZEN_TURNS.name}")
    print(f"  {'gold labels, gold goals':<40} {gsr(dialogues, gold_q, gold_starts)}")
    for trio, name in ((LEARNED, "learned trio"), (RULES, "rule trio")):
        votes = vote_all(dialogues, [labels[t] for t in trio])
        voted = [[turn["quality"] for turn in turns] for turns in votes]
        for goals, new_goal in starts.items():
            print(f"  {f'vote ({name}), {goals}':<40} {gsr(dialogues, voted, new_goal)}")


def agreement(title: str, labels: dict[str, Labels]) -> None:
    flat = {name: [label.quality for turns in labels[name] for label in turns] for name in LEARNED}
    pairs = ", ".join(
        f"{a.split(':')[1]}~{b.split(':')[1]} {fmt(cohen_kappa(flat[a], flat[b]))}"
        for a, b in combinations(LEARNED, 2)
    )
    complete = [list(item) for item in zip(*flat.values(), strict=True) if None not in item]
    print(
        f"  {title}: Cohen's kappa {pairs}; Fleiss' kappa {fmt(fleiss_kappa(complete))} "
        f"over the {len(complete)} of {len(flat[LEARNED[0]])} turns all three labelled"
    )


def speed(dialogues: list[Dialogue]) -> None:
    turns = sum(len(d.turns) for d in dialogues)
    total = 0.0
    for name in LEARNED:
        started = time.perf_counter()
        label_all(TURN_QUALITY.judge(name), dialogues)
        elapsed = time.perf_counter() - started
        total += elapsed
        print(f"  {name:<24} {turns / elapsed:7.0f} turns/s (prepare + label, warm cache)")
    print(f"  all three teachers       {turns / total:7.0f} turns/s")


def main() -> None:
    print(f"machine: {os.cpu_count()} cores")
    print(f"learned teachers trained on: {shipped_model().meta['trained_on']}")
    frozen = gold_quality(load_file(FROZEN_TURNS))
    original, synthetic = heldout_sgd()
    sets = {"frozen": frozen, "original": original, "synthetic": synthetic}
    labels: dict[str, dict[str, Labels]] = {key: {} for key in sets}
    for name in (*LEARNED, *RULES):
        teacher = TURN_QUALITY.judge(name)
        started = time.perf_counter()
        for key, scored in sets.items():
            labels[key][name] = label_all(teacher, [s.dialogue for s in scored])
        print(f"{name}: every set labelled in {time.perf_counter() - started:.1f} s", flush=True)
    figures(f"Frozen failure set {FROZEN_TURNS.name} (people)", frozen, labels["frozen"])
    figures(
        f"SGD held-out services, real turns ({len(original)} dialogues, labels from SGD acts)",
        original,
        labels["original"],
    )
    figures("SGD held-out services, team-made failures and repairs", synthetic, labels["synthetic"])
    per_code(f"Frozen failure set {FROZEN_TURNS.name}", frozen, labels["frozen"])
    held = original + synthetic
    held_labels = {n: labels["original"][n] + labels["synthetic"][n] for n in LEARNED}
    per_code("SGD held-out services (recorded + made failures)", held, held_labels)
    gsr_figures(frozen, labels["frozen"])
    print("\nAgreement among the three learned teachers (quality)")
    agreement(FROZEN_TURNS.name, labels["frozen"])
    agreement("SGD held-out, real turns", labels["original"])
    print(f"\nSpeed on the SGD held-out dialogues ({len(original)}), second pass")
    speed([s.dialogue for s in original])


if __name__ == "__main__":
    main()
