"""Train the local goal extractor's intent scorer on SGD train (``make train-goal-extractor``).

One row per (user utterance, intent of ``schema_train.json``), features from
:mod:`nodes.goal_tracking.judges.goal_extraction.features`; positive when the utterance starts that
``(service, intent)`` goal in SGD's ``segments``. Rows where the intent is already active
(the user refers back to a goal) are left out: they are neither clearly positive nor negative
for "raises a goal". Most easy negatives are subsampled.

Reproducible: fixed seed, the SGD train dialogues shuffled and split 90/10 (the 10% early-stops
training and tunes the decision threshold for dialogue-level goal-detection F1), SGD dev
untouched until the final report, which is read with ``schema_dev.json`` (8 of its 17
services are absent from train). Writes ``nodes/judges/models/goal_extractor_mlp.{npz,json}``.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Collection, Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from scripts.train_segmenter import TableEmbed
from todeval.evals.datasets import load_dialogues, split_records
from todeval.evals.datasets.sgd_schema import ServiceSchema, load_sgd_schema
from todeval.evals.schema import Dialogue
from todeval.nodes.goal_tracking.judges.goal_extraction import (
    CONTEXT_UTTERANCES,
    dialogue_utterances,
)
from todeval.nodes.goal_tracking.judges.goal_extraction.local import MODEL_PATH, LocalGoalExtractor
from todeval.nodes.judges.classifier import MLPClassifier, TrainingConfig
from todeval.stores.paths import data_dir

Pair = tuple[str, str]
#: Per dialogue: per user utterance, the top intents and their probabilities.
Scored = list[list[tuple[Pair, float]]]


def gold_goals(dialogue: Dialogue) -> set[Pair]:
    """The dialogue's gold goal set (``metadata["goals"]``)."""
    return {(service, intent) for service, intent in dialogue.metadata.get("goals") or []}


def goal_set_scores(
    predicted: Sequence[set[Pair]],
    gold: Sequence[set[Pair]],
    services: Collection[str] | None = None,
) -> dict[str, float | int]:
    """Micro precision/recall/F1 of per-dialogue goal sets, optionally on some services only."""
    tp = n_pred = n_gold = 0
    for pred, true in zip(predicted, gold, strict=True):
        if services is not None:
            pred = {g for g in pred if g[0] in services}
            true = {g for g in true if g[0] in services}
        tp, n_pred, n_gold = tp + len(pred & true), n_pred + len(pred), n_gold + len(true)
    precision = tp / n_pred if n_pred else 0.0
    recall = tp / n_gold if n_gold else 0.0
    f1 = 2 * tp / (n_pred + n_gold) if n_pred + n_gold else 0.0
    return {
        "precision": round(precision, 4),
        "recall": round(recall, 4),
        "f1": round(f1, 4),
        "tp": tp,
        "n_pred": n_pred,
        "n_gold": n_gold,
        "n_dialogues": len(gold),
    }


def start_and_active(dialogue: Dialogue) -> tuple[dict[int, set[Pair]], dict[int, set[Pair]]]:
    """Gold per turn: the goals its user utterance starts, and those active there."""
    starts: dict[int, set[Pair]] = {}
    for index, service, intent in dialogue.metadata.get("segments") or []:
        starts.setdefault(index // 2 + 1, set()).add((service, intent))
    active = {
        turn.turn_number: {
            (frame["svc"], frame["intent"])
            for frame in turn.metadata.get("sgd_user_frames") or []
            if frame.get("intent") not in (None, "NONE")
        }
        for turn in dialogue.turns
    }
    return starts, active


def featurise(
    extractor: LocalGoalExtractor, dialogues: Sequence[Dialogue], rng: np.random.Generator
) -> tuple[NDArray[np.float32], NDArray[np.bool_]]:
    """Training rows: starts are positive, active-but-not-starting rows are dropped."""
    pairs = extractor.index.pairs
    rows, labels = [], []
    for dialogue in dialogues:
        starts, active = start_and_active(dialogue)
        utterances = dialogue_utterances(dialogue)
        for k, utterance in enumerate(utterances):
            if utterance.speaker != "USER":
                continue
            context = utterances[max(0, k - CONTEXT_UTTERANCES) : k]
            x = extractor.features(utterance, context)
            y = np.array([pair in starts.get(utterance.turn, set()) for pair in pairs])
            ongoing = np.array([pair in active.get(utterance.turn, set()) for pair in pairs])
            hard = (np.argsort(np.argsort(-x[:, 3])) < 6) | (np.argsort(np.argsort(-x[:, 8])) < 3)
            keep = (y | ~ongoing) & (y | hard | (rng.random(len(pairs)) < 0.2))
            rows.append(x[keep])
            labels.append(y[keep])
    return np.concatenate(rows), np.concatenate(labels)


def score_dialogues(extractor: LocalGoalExtractor, dialogues: Sequence[Dialogue]) -> list[Scored]:
    """Each user utterance's top intents with probabilities, for threshold tuning."""
    scored = []
    for dialogue in dialogues:
        utterances = dialogue_utterances(dialogue)
        per_utterance = []
        for k, utterance in enumerate(utterances):
            if utterance.speaker != "USER":
                continue
            context = utterances[max(0, k - CONTEXT_UTTERANCES) : k]
            top = extractor.ranked(utterance, context)
            per_utterance.append([(extractor.index.pairs[row], p) for row, p in top])
        scored.append(per_utterance)
    return scored


def goal_sets(scored: Sequence[Scored], threshold: float) -> list[set[Pair]]:
    """Per dialogue, the distinct goals scored at or above ``threshold``."""
    return [{pair for top in d for pair, p in top if p >= threshold} for d in scored]


def tune_threshold(scored: Sequence[Scored], gold: Sequence[set[Pair]]) -> float:
    """The threshold with the best dialogue-level goal-detection F1."""
    grid = [round(float(t), 3) for t in np.linspace(0.05, 0.95, 91)]
    grid += [round(float(t), 3) for t in np.linspace(0.955, 0.995, 9)]
    f1s = [float(goal_set_scores(goal_sets(scored, t), gold)["f1"]) for t in grid]
    return grid[int(np.argmax(f1s))]


def load_split(path: Path) -> list[Dialogue]:
    """SGD dialogues of one compact file."""
    dialogues, _ = split_records(load_dialogues(path, "sgd"))
    return dialogues


def main(argv: Sequence[str] | None = None) -> None:
    """Train, tune on held-out train, report held-out and dev figures, save the model."""
    parser = argparse.ArgumentParser(description=__doc__)
    sgd = data_dir() / "sgd"
    parser.add_argument("--train", type=Path, default=sgd / "sgd_train.jsonl.gz")
    parser.add_argument("--dev", type=Path, default=sgd / "sgd_dev.jsonl.gz")
    parser.add_argument("--train-schema", type=Path, default=sgd / "schema_train.json")
    parser.add_argument("--dev-schema", type=Path, default=sgd / "schema_dev.json")
    parser.add_argument("--max-dialogues", type=int, default=8000, help="subsample train")
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--out", type=Path, default=MODEL_PATH)
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args(argv)
    started = time.perf_counter()

    train_all, dev = load_split(args.train), load_split(args.dev)
    random.Random(args.seed).shuffle(train_all)
    train_all = train_all[: args.max_dialogues] if args.max_dialogues else train_all
    cut = len(train_all) * 9 // 10
    train, valid = train_all[:cut], train_all[cut:]
    train_schema, dev_schema = load_sgd_schema(args.train_schema), load_sgd_schema(args.dev_schema)
    print(f"SGD: {len(train)} train, {len(valid)} validation, {len(dev)} dev dialogues")

    embed = TableEmbed([*train, *valid, *dev])
    on_train = LocalGoalExtractor(train_schema, embed=embed)
    rng = np.random.default_rng(args.seed)
    x_train, y_train = featurise(on_train, train, rng)
    x_valid, y_valid = featurise(on_train, valid, rng)
    print(f"features: {x_train.shape[0]} rows x {x_train.shape[1]}, {y_train.mean():.3f} positive")
    config = TrainingConfig(hidden=args.hidden, seed=args.seed, epochs=40)
    model = MLPClassifier.fit(
        x_train, y_train, valid_features=x_valid, valid_labels=y_valid, config=config
    )
    on_train = LocalGoalExtractor(train_schema, model=model, embed=embed)
    valid_scored, valid_gold = score_dialogues(on_train, valid), [gold_goals(d) for d in valid]
    model.threshold = tune_threshold(valid_scored, valid_gold)
    valid_report = goal_set_scores(goal_sets(valid_scored, model.threshold), valid_gold)

    on_dev = LocalGoalExtractor(dev_schema, model=model, embed=embed)
    dev_report = dev_figures(on_dev, dev, train_schema)
    model.metadata |= {
        "role": "goal_extraction",
        "trained_on": f"SGD train ({len(train)} dialogues, seed {args.seed}), schema_train.json",
        "features": "nodes/goal_tracking/judges/goal_extraction/features.py",
        "label": "the utterance starts the (service, intent) goal (SGD segments)",
        "threshold_tuned_on": f"SGD train held out ({len(valid)} dialogues), dialogue-level F1",
        "validation": valid_report,
        "sgd_dev": dev_report,
        "training_seconds": round(time.perf_counter() - started, 1),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    model.save(args.out)
    print(f"threshold {model.threshold}")
    print(f"validation (SGD train held out): {valid_report}")
    print(f"SGD dev (schema_dev): {dev_report}")
    print(f"saved {args.out} in {time.perf_counter() - started:.0f} s")


def dev_figures(
    extractor: LocalGoalExtractor,
    dialogues: Sequence[Dialogue],
    seen_schema: dict[str, ServiceSchema],
) -> dict[str, dict[str, float | int]]:
    """Goal detection on ``dialogues``: all services and the ones ``seen_schema`` lacks."""
    assert extractor.schema is not None
    unseen = set(extractor.schema) - set(seen_schema)
    scored = score_dialogues(extractor, dialogues)
    predicted = goal_sets(scored, extractor.model.threshold)
    gold = [gold_goals(d) for d in dialogues]
    return {
        "all": goal_set_scores(predicted, gold),
        "unseen_services": goal_set_scores(predicted, gold, unseen),
    }


if __name__ == "__main__":
    main()
