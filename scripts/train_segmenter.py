"""Train the ``local:learned`` goal segmenter (``make train-segmenter``).

Data: SGD train (CC BY-SA 4.0), split 90/10 by dialogue with a fixed seed, and the project's
own human-style dialogues ``data/segmentation_train/train.txt`` (MultiWOZ-like multi-domain
bookings and other assistants, where goals share slots and name no service). Two models:

1. the discourse-cue model (:mod:`nodes.goal_success.judges.segmentation.discourse`), logistic
   regression over hashed function-word n-grams; its out-of-fold logits feed step 2;
2. gradient-boosted trees over the goal-relative features
   (:mod:`nodes.goal_success.judges.segmentation.goal_features`), rows built against the gold
   current goal.

The decision threshold maximises the mean boundary F1, decoded as the judge decodes, of the
SGD validation tenth and ``data/segmentation_train/dev.txt``. SGD dev, the samples and
``data/validation/goal_boundaries.jsonl`` (a development set since issue 29) are never read here
(``bench/segmentation.py`` reports them). Writes ``segmentation_trees.{npz,json}`` and
``segmentation_cues.npz`` beside the judge.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import sklearn

from scripts.segmentation_data import load_training_dialogues
from scripts.segmentation_training import (
    DecodingSet,
    TableEmbed,
    feature_rows,
    fit_cue_model,
    fit_trees,
    labelled_turns,
)
from todeval.evals.datasets import load_dialogues, split_records
from todeval.evals.schema import Dialogue
from todeval.nodes.goal_success.judges.segmentation import (
    CUES_PATH,
    MODEL_PATH,
    LearnedSegmenter,
)
from todeval.stores.paths import data_dir


def sgd_split(path: Path, limit: int | None, seed: int) -> tuple[list[Dialogue], list[Dialogue]]:
    """SGD train shuffled with ``seed``, cut to ``limit`` dialogues, split 90/10."""
    dialogues, _ = split_records(load_dialogues(path, "sgd"))
    dialogues = [d for d in dialogues if d.has_gold_segmentation]
    random.Random(seed).shuffle(dialogues)
    dialogues = dialogues[:limit] if limit else dialogues
    cut = len(dialogues) * 9 // 10
    return dialogues[:cut], dialogues[cut:]


def pick_threshold(sets: Sequence[DecodingSet]) -> tuple[float, list[float]]:
    """The cut that maximises the mean F1 over ``sets``, and those F1s."""
    best = (0.5, [-1.0])
    for threshold in np.round(np.arange(0.2, 0.81, 0.025), 3):
        scores = [decoding.report(float(threshold))["f1"] or 0.0 for decoding in sets]
        if np.mean(scores) > np.mean(best[1]):
            best = (float(threshold), scores)
    return best


def main(argv: Sequence[str] | None = None) -> None:
    """Train both models, pick the threshold, report, save."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--train", type=Path, default=data_dir() / "sgd" / "sgd_train.jsonl.gz")
    parser.add_argument("--max-dialogues", type=int, default=8000, help="SGD train dialogues")
    parser.add_argument(
        "--human-weight",
        type=float,
        default=0.5,
        help="total weight of the human-style turns relative to SGD's",
    )
    parser.add_argument("--trees", type=int, default=300)
    parser.add_argument("--depth", type=int, default=4)
    parser.add_argument("--learning-rate", type=float, default=0.1)
    parser.add_argument("--cue-c", type=float, default=0.3, help="inverse L2 of the cue model")
    parser.add_argument("--out", type=Path, default=MODEL_PATH)
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args(argv)
    started = time.perf_counter()

    sgd_train, sgd_valid = sgd_split(args.train, args.max_dialogues, args.seed)
    human = load_training_dialogues("train")
    own_dev = load_training_dialogues("dev")
    train = [*sgd_train, *human]
    print(
        f"train: {len(sgd_train)} SGD + {len(human)} human-style dialogues; "
        f"threshold on {len(sgd_valid)} SGD + {len(own_dev)} own dev dialogues"
    )
    embed = TableEmbed([*train, *sgd_valid, *own_dev])

    turns = labelled_turns(train)
    is_human = np.array([index >= len(sgd_train) for index, *_ in turns])
    weights = np.ones(len(turns), dtype=np.float32)
    if is_human.any():
        weights[is_human] = args.human_weight * (~is_human).sum() / is_human.sum()
    cues, out_of_fold = fit_cue_model(turns, weights, c=args.cue_c, seed=args.seed)
    rows, labels = feature_rows(train, embed, out_of_fold)
    print(
        f"features: {rows.shape[0]} turns x {rows.shape[1]}, {labels.mean():.3f} new, "
        f"{is_human.sum()} human-style turns weighted {weights[is_human][:1]}",
        flush=True,
    )
    model = fit_trees(
        rows,
        labels,
        weights,
        trees=args.trees,
        depth=args.depth,
        learning_rate=args.learning_rate,
        seed=args.seed,
    )
    judge = LearnedSegmenter(model, cues, embed)
    decoding = {
        "sgd_validation": DecodingSet(judge, sgd_valid),
        "own_dev": DecodingSet(judge, own_dev),
    }
    model.threshold_probability, tuned = pick_threshold(list(decoding.values()))
    model.metadata = {
        "role": "segmentation",
        "trained_on": (
            f"SGD train ({len(sgd_train)} dialogues, seed {args.seed}) + "
            f"{len(human)} human-style dialogues (data/segmentation_train/train.txt)"
        ),
        "features": "nodes/goal_success/judges/segmentation/goal_features.py",
        "training": {
            "trees": args.trees,
            "depth": args.depth,
            "learning_rate": args.learning_rate,
            "human_weight": args.human_weight,
            "cue_c": args.cue_c,
            "seed": args.seed,
            "turns": int(rows.shape[0]),
            "human_turns": int(is_human.sum()),
            "scikit_learn": sklearn.__version__,
            "seconds": round(time.perf_counter() - started),
        },
        "threshold_chosen_on": "mean F1 of SGD train's held-out tenth and dev.txt",
    } | {name: decoding_set.report() for name, decoding_set in decoding.items()}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    model.save(args.out)
    cues.save(args.out.parent / CUES_PATH.name)
    print(f"threshold {model.threshold_probability} (F1 {tuned})")
    for name in ("sgd_validation", "own_dev"):
        figures = model.metadata[name]
        print(
            f"{name}: P {figures['precision']:.3f} R {figures['recall']:.3f} "
            f"F1 {figures['f1']:.3f} exact {figures['exact_segmentation_rate']:.3f}"
        )
    print(f"saved {args.out} in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
