"""Calibrate the local turn-quality teachers' embedding thresholds on public data (SGD dev).

SGD has no turn-quality labels, so each threshold is set from a contrast SGD does have:

1. ``semantic_teacher.FAIL_BELOW`` / ``SUCCEED_ABOVE``: answer-question fit of *true pairs*
   (every SGD turn the semantic teacher does not abstain on) against *wrong answers* (the
   same question paired with a reply from another dialogue of the same service: on topic,
   but answering something else, which is what E1 looks like). FAIL_BELOW = 5th percentile of
   true pairs; SUCCEED_ABOVE = 95th percentile of wrong answers. For reference it also prints
   the same contrast on SGD's purest question-answer turns (a slot request answered with
   exactly those slots, against the answer to a different request), whose cut points are
   sharper but flag many of SGD's transactional replies (offers, bookings) when applied to
   every turn.
2. ``signal_teacher.REPHRASE_MIN``: cosine of consecutive user messages within one goal (SGD's
   gold segments), with the teacher's own exclusions; the 98th percentile.
3. ``response_teacher.ROUTE_MARGIN``: SGD services as routes (described by their names), all
   of the corpus's services as the table, 10% of the questions re-routed at random; the
   margin at which about 5% of the correctly routed questions are flagged, with the share of
   re-routed ones caught.

Usage: ``.venv/bin/python -m scripts.calibrate_semantic_teacher [SGD_DEV_PATH]``
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from todeval.evals.datasets import load_dialogues, split_records
from todeval.evals.schema import Dialogue
from todeval.nodes.goal_success.judges.turn_quality.local_response import (
    RouteDomains,
    route_profile,
)
from todeval.nodes.goal_success.judges.turn_quality.local_semantic import (
    abstention,
    answer_fit,
    question_texts,
)
from todeval.nodes.goal_success.judges.turn_quality.local_signals import can_rephrase
from todeval.nodes.goal_success.judges.user_cues import carries_domain
from todeval.nodes.judges.vectors import VectorTable
from todeval.stores.paths import data_dir

PERCENTILES = (1, 5, 10, 25, 50, 75, 90, 95, 99)


def _auc(positive: NDArray[np.float64], negative: NDArray[np.float64]) -> float:
    """P(a random positive scores above a random negative), ties counted half."""
    scores = np.concatenate([positive, negative])
    ranks = scores.argsort().argsort().astype(np.float64) + 1
    rank_sum = ranks[: len(positive)].sum()
    return float(
        (rank_sum - len(positive) * (len(positive) + 1) / 2) / (len(positive) * len(negative))
    )


def _fit_pairs(
    rows: Sequence[tuple[str, str | None, str, str, str]],
    vectors: VectorTable,
    rng: random.Random,
    unrelated: Callable[[int, int], bool] = lambda i, j: True,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Fit of each ``(question, context, answer, service, dialogue)`` row to its own answer
    and to a wrong one: the answer of a row ``j`` of the same service, another dialogue, and
    ``unrelated(row index, j)``."""
    by_service: dict[str, list[int]] = {}
    for i, row in enumerate(rows):
        by_service.setdefault(row[3], []).append(i)
    vectors.load([t for row in rows for t in (row[0], row[1] or row[0], row[2])])
    true_fit, wrong_fit = [], []
    for index, (question, context, answer, service, dialogue_id) in enumerate(rows):
        candidates = [
            j for j in by_service[service] if rows[j][4] != dialogue_id and unrelated(index, j)
        ]
        if not candidates:
            continue
        wrong = rows[rng.choice(candidates)][2]
        q, c, r, w = vectors.get([question, context or question, answer, wrong])
        true_fit.append(answer_fit(q, c if context else None, r))
        wrong_fit.append(answer_fit(q, c if context else None, w))
    return np.array(true_fit), np.array(wrong_fit)


def judged_pairs(
    dialogues: Sequence[Dialogue], vectors: VectorTable, seed: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Every turn the teacher judges, against a reply from another dialogue, same service."""
    rows = [
        (question, context, turn.response, str(d.metadata["services"][0]), d.dialogue_id)
        for d in dialogues
        for turn, (question, context) in zip(d.turns, question_texts(d), strict=True)
        if abstention(turn) is None
    ]
    return _fit_pairs(rows, vectors, random.Random(seed))


def informational_pairs(
    dialogues: Sequence[Dialogue], vectors: VectorTable, seed: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Slot requests answered with exactly those slots, against the answer to another request."""
    rows, informed_slots = [], []
    for d in dialogues:
        for turn, (question, context) in zip(d.turns, question_texts(d), strict=True):
            user_frames = turn.metadata.get("sgd_user_frames") or []
            system_frames = turn.metadata.get("sgd_system_frames") or []
            requested = {slot for f in user_frames for slot in f.get("req", [])}
            informed = {a[1] for f in system_frames for a in f.get("act", []) if a[0] == "INFORM"}
            if requested and requested <= informed:
                rows.append(
                    (question, context, turn.response, user_frames[0]["svc"], d.dialogue_id)
                )
                informed_slots.append(frozenset(informed))

    def other_request(i: int, j: int) -> bool:
        return not informed_slots[j] & informed_slots[i]

    return _fit_pairs(rows, vectors, random.Random(seed), other_request)


def rephrase_similarities(
    dialogues: Sequence[Dialogue], vectors: VectorTable
) -> NDArray[np.float64]:
    """Cosine of consecutive user messages within one gold goal (never a rephrase in SGD)."""
    pairs = [
        (a.user_msg, b.user_msg)
        for d in dialogues
        for a, b in zip(d.turns, d.turns[1:], strict=False)
        if b.is_new_goal is False and can_rephrase(b.user_msg)
    ]
    vectors.load([t for pair in pairs for t in pair])
    a = vectors.get([p[0] for p in pairs])
    b = vectors.get([p[1] for p in pairs])
    similarities: NDArray[np.float64] = np.sum(a * b, axis=1).astype(np.float64)
    return similarities


def route_margins(
    dialogues: Sequence[Dialogue], vectors: VectorTable, seed: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Margins of correctly routed and of randomly re-routed questions.

    SGD services stand in for routes; the route table is every service of the corpus, each
    described by its name only (the CLI's default table).
    """
    rng = random.Random(seed)
    items = []
    for d in dialogues:
        for turn in d.turns:
            active = [
                f
                for f in turn.metadata.get("sgd_user_frames") or []
                if f.get("intent") not in (None, "NONE")
            ]
            if active and carries_domain(turn.user_msg):
                items.append([active[0]["svc"], turn.user_msg, False])
    services = sorted({item[0] for item in items})
    for item in items:
        if rng.random() < 0.10:
            item[0] = rng.choice([s for s in services if s != item[0]])
            item[2] = True
    vectors.load([i[1] for i in items] + [route_profile(s) for s in services])
    domains = RouteDomains.build(dict.fromkeys(services, ""), vectors)
    fits = domains.fit_many(vectors.get([i[1] for i in items]))
    correct: list[float] = []
    rerouted: list[float] = []
    for (route, _, moved), row in zip(items, fits, strict=True):
        margin = float(row.max() - row[domains.routes.index(route)])
        (rerouted if moved else correct).append(margin)
    return np.array(correct), np.array(rerouted)


def _print_fit(true_fit: NDArray[np.float64], wrong_fit: NDArray[np.float64]) -> None:
    fail_below = float(np.percentile(true_fit, 5))
    succeed_above = float(np.percentile(wrong_fit, 95))
    print(f"    AUC {_auc(true_fit, wrong_fit):.3f}; percentiles {PERCENTILES}")
    print("    true pairs    ", np.round(np.percentile(true_fit, PERCENTILES), 3))
    print("    wrong answers ", np.round(np.percentile(wrong_fit, PERCENTILES), 3))
    print(
        f"    FAIL_BELOW = {fail_below:.3f} (wrong answers below: "
        f"{np.mean(wrong_fit < fail_below):.0%}); SUCCEED_ABOVE = {succeed_above:.3f} "
        f"(true pairs at or above: {np.mean(true_fit >= succeed_above):.0%})"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("path", nargs="?", default=str(data_dir() / "sgd" / "sgd_dev.jsonl.gz"))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    dialogues, errors = split_records(load_dialogues(args.path))
    print(f"{len(dialogues)} dialogues from {args.path} ({len(errors)} unreadable)")
    vectors = VectorTable()

    true_fit, wrong_fit = informational_pairs(dialogues, vectors, args.seed)
    print(f"\n1a. slot requests answered: {len(true_fit)} pairs (reference, not used)")
    _print_fit(true_fit, wrong_fit)
    true_fit, wrong_fit = judged_pairs(dialogues, vectors, args.seed)
    print(f"\n1b. every turn the semantic teacher judges: {len(true_fit)} pairs (used)")
    _print_fit(true_fit, wrong_fit)

    sims = rephrase_similarities(dialogues, vectors)
    print(f"\n2. consecutive same-goal user messages: {len(sims)} pairs")
    print("   percentiles 50/90/95/98/99:", np.round(np.percentile(sims, [50, 90, 95, 98, 99]), 3))
    print(f"   REPHRASE_MIN = {np.percentile(sims, 98):.3f} (98th percentile)")

    correct, rerouted = route_margins(dialogues, vectors, args.seed)
    print(f"\n3. routing: {len(correct)} correctly routed, {len(rerouted)} re-routed questions")
    for margin in (0.05, 0.1, 0.15, 0.2, 0.25, 0.3):
        print(
            f"   margin {margin:.2f}: flags {np.mean(correct >= margin):.1%} of correct, "
            f"{np.mean(rerouted >= margin):.1%} of re-routed"
        )
    print(f"   ROUTE_MARGIN at 5% false alarms = {np.percentile(correct, 95):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
