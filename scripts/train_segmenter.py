"""Train the ``local:learned`` goal segmenter on SGD train (``make train-segmenter``).

Reproducible: fixed seed, SGD train split 90/10 by dialogue (the 10% early-stops training and
tunes the decision threshold), SGD dev untouched until the final report. Writes
``nodes/judges/models/segmentation_mlp.{npz,json}``.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from evals.datasets import load_dialogues, split_records
from evals.metrics.goal_success.segmentation import segmentation_report
from evals.schema import Dialogue
from nodes.context import Context
from nodes.goal_success.judges.segmentation.features import (
    ActPrototypes,
    segmentation_features,
    turn_texts,
)
from nodes.goal_success.judges.segmentation.local import MODEL_PATH, LearnedSegmenter
from nodes.judges.classifier import MLPClassifier, TrainingConfig
from stores.embeddings import get_embedder
from stores.paths import data_dir


def embedding_table(dialogues: Sequence[Dialogue]) -> dict[str, NDArray[np.float32]]:
    """Every distinct utterance embedded once, in large batches."""
    texts: set[str] = set()
    for dialogue in dialogues:
        users, replies = turn_texts(dialogue)
        texts.update(users, replies)
    ordered = sorted(texts)
    embedder = get_embedder()
    vectors: list[NDArray[np.float32]] = []
    started = time.perf_counter()
    for start in range(0, len(ordered), 4096):
        vectors.append(embedder.embed(ordered[start : start + 4096]))
        done = min(start + 4096, len(ordered))
        rate = done / (time.perf_counter() - started)
        print(f"  embedded {done}/{len(ordered)} utterances ({rate:.0f}/s)", flush=True)
    matrix = np.concatenate(vectors) if vectors else np.zeros((0, 384), np.float32)
    return dict(zip(ordered, matrix, strict=True))


class TableEmbed:
    """Embeddings looked up in the precomputed table, the model for anything else."""

    def __init__(self, table: dict[str, NDArray[np.float32]]) -> None:
        self.table = table

    def __call__(self, texts: Sequence[str]) -> NDArray[np.float32]:
        missing = [text for text in texts if text not in self.table]
        if missing:  # the act prototypes
            self.table.update(zip(missing, get_embedder().embed(missing), strict=True))
        return np.stack([self.table[text] for text in texts])


def featurise(
    dialogues: Sequence[Dialogue], embed: TableEmbed
) -> tuple[NDArray[np.float32], NDArray[np.bool_]]:
    """Stack feature rows and gold labels for turns 2..N of every dialogue."""
    prototypes = ActPrototypes.embed_with(embed)
    rows, labels = [], []
    for dialogue in dialogues:
        gold = dialogue.gold_new_goal_labels()
        if gold is None or len(gold) < 2:
            continue
        rows.append(segmentation_features(dialogue, embed, prototypes))
        labels.extend(gold[1:])
    return np.concatenate(rows), np.asarray(labels, dtype=bool)


def evaluate(
    model: MLPClassifier, dialogues: Sequence[Dialogue], embed: TableEmbed
) -> dict[str, object]:
    """Segmentation metrics of ``model`` through the judge that will serve it."""
    judge = LearnedSegmenter(model, embed)
    pairs = []
    for dialogue in dialogues:
        gold = dialogue.gold_new_goal_labels()
        if gold is None:
            continue
        verdict = judge.segment(dialogue, time_gap_minutes=Context.time_gap_minutes, threshold=None)
        pairs.append((gold, [bool(label) for label in verdict.is_new_goal]))
    return segmentation_report(pairs)


def main(argv: Sequence[str] | None = None) -> None:
    """Train, report held-out and dev figures, save the model."""
    parser = argparse.ArgumentParser(description=__doc__)
    sgd = data_dir() / "sgd"
    parser.add_argument("--train", type=Path, default=sgd / "sgd_train.jsonl.gz")
    parser.add_argument("--dev", type=Path, default=sgd / "sgd_dev.jsonl.gz")
    parser.add_argument("--max-dialogues", type=int, default=None, help="subsample train")
    parser.add_argument("--out", type=Path, default=MODEL_PATH)
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args(argv)

    train_all, _ = split_records(load_dialogues(args.train, "sgd"))
    dev, _ = split_records(load_dialogues(args.dev, "sgd"))
    random.Random(args.seed).shuffle(train_all)
    if args.max_dialogues:
        train_all = train_all[: args.max_dialogues]
    cut = len(train_all) * 9 // 10
    train, valid = train_all[:cut], train_all[cut:]
    print(f"SGD: {len(train)} train, {len(valid)} validation, {len(dev)} dev dialogues")

    embed = TableEmbed(embedding_table([*train, *valid, *dev]))
    x_train, y_train = featurise(train, embed)
    x_valid, y_valid = featurise(valid, embed)
    print(
        f"features: {x_train.shape[0]} train turns x {x_train.shape[1]}, {y_train.mean():.3f} new"
    )
    config = TrainingConfig(hidden=64, seed=args.seed)
    model = MLPClassifier.fit(
        x_train, y_train, valid_features=x_valid, valid_labels=y_valid, config=config
    )
    valid_report = evaluate(model, valid, embed)
    dev_report = evaluate(model, dev, embed)
    model.metadata |= {
        "role": "segmentation",
        "trained_on": f"SGD train ({len(train)} dialogues, seed {args.seed})",
        "features": "nodes/goal_success/judges/segmentation/features.py",
        "validation": valid_report,
        "sgd_dev": dev_report,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    model.save(args.out)
    print(f"threshold {model.threshold}")
    print(f"validation (SGD train held out): {valid_report}")
    print(f"SGD dev: {dev_report}")
    print(f"saved {args.out}")


if __name__ == "__main__":
    main()
