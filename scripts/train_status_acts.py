"""Train the goal tracker's system-act model on SGD train (``python -m scripts.train_status_acts``).

One row per system utterance of SGD train, labelled by its annotated acts (all frames): ``failure``
(NOTIFY_FAILURE) over ``success`` (NOTIFY_SUCCESS) over ``confirm`` (CONFIRM) over ``results``
(OFFER, INFORM_COUNT) over ``other``, the priority of :class:`evals.datasets.sgd_timeline.FrameAct`.
Features are :func:`~nodes.goal_tracking.judges.goal_extraction.status_cues.text_features`
(n-grams seen in at least ``--min-df`` train utterances); the model a multinomial logistic
regression (scikit-learn), exported to ``status_acts.{npz,json}`` for numpy inference.

Reproducible: the regularisation is chosen on 10% of the train dialogues (a seeded split), the
model refitted on all of train; SGD dev is read only for the final report, split into the
services seen in train and those that are not (8 of dev's 17).
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import sklearn
from scipy.sparse import csr_matrix
from sklearn.linear_model import LogisticRegression

from todeval.nodes.goal_tracking.judges.goal_extraction.status_cues import (
    MODEL_PATH,
    SYSTEM_ACTS,
    SystemActModel,
    text_features,
)
from todeval.stores.paths import data_dir

PRIORITY = (
    ("failure", {"NOTIFY_FAILURE"}),
    ("success", {"NOTIFY_SUCCESS"}),
    ("confirm", {"CONFIRM"}),
    ("results", {"OFFER", "INFORM_COUNT"}),
)
Row = tuple[str, str, frozenset[str]]  # text, label, services


def label(acts: set[str]) -> str:
    """The utterance's class by the priority of :data:`PRIORITY`."""
    return next((name for name, wanted in PRIORITY if acts & wanted), "other")


def system_rows(path: Path) -> Iterator[tuple[str, Row]]:
    """``(dialogue_id, (text, label, services))`` per system utterance of a compact SGD file."""
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        for line in lines:
            dialogue = json.loads(line)
            for turn in dialogue["turns"]:
                if turn["s"] != "S" or not turn["t"].strip():
                    continue
                acts = {act[0] for frame in turn["f"] for act in frame.get("act", [])}
                services = frozenset(frame["svc"] for frame in turn["f"])
                yield dialogue["dialogue_id"], (turn["t"], label(acts), services)


def matrix(rows: Sequence[Row], vocabulary: dict[str, int]) -> csr_matrix:
    """Binary n-gram features scaled to unit length (as the model reads them)."""
    indptr, indices, values = [0], [], []
    for text, _, _ in rows:
        columns = sorted({vocabulary[g] for g in text_features(text) if g in vocabulary})
        indices += columns
        values += [1.0 / np.sqrt(max(len(columns), 1))] * len(columns)
        indptr.append(len(indices))
    return csr_matrix((values, indices, indptr), shape=(len(rows), len(vocabulary)))


def fit(rows: Sequence[Row], vocabulary: dict[str, int], c: float) -> LogisticRegression:
    """A multinomial logistic regression on ``rows``."""
    model = LogisticRegression(C=c, max_iter=2000)
    model.fit(matrix(rows, vocabulary), [lab for _, lab, _ in rows])
    return model


def scores(
    model: LogisticRegression, rows: Sequence[Row], vocabulary: dict[str, int]
) -> dict[str, Any]:
    """Accuracy and per-class precision/recall of ``model`` on ``rows``."""
    if not rows:
        return {"n": 0}
    predicted = model.predict(matrix(rows, vocabulary))
    gold = [lab for _, lab, _ in rows]
    out: dict[str, Any] = {
        "n": len(rows),
        "accuracy": round(
            float(np.mean([p == g for p, g in zip(predicted, gold, strict=True)])), 4
        ),
    }
    for name in SYSTEM_ACTS:
        tp = sum(p == g == name for p, g in zip(predicted, gold, strict=True))
        n_pred, n_gold = sum(p == name for p in predicted), gold.count(name)
        out[name] = {
            "precision": round(tp / n_pred, 4) if n_pred else None,
            "recall": round(tp / n_gold, 4) if n_gold else None,
            "n": n_gold,
        }
    return out


def main() -> None:
    """Choose C on held-out train dialogues, refit on all train, report on dev, save."""
    parser = argparse.ArgumentParser(description=__doc__)
    sgd = data_dir() / "sgd"
    parser.add_argument("--train", type=Path, default=sgd / "sgd_train.jsonl.gz")
    parser.add_argument("--dev", type=Path, default=sgd / "sgd_dev.jsonl.gz")
    parser.add_argument("--train-schema", type=Path, default=sgd / "schema_train.json")
    parser.add_argument("--min-df", type=int, default=5)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--out", type=Path, default=MODEL_PATH)
    args = parser.parse_args()
    train = list(system_rows(args.train))
    dialogues = sorted({d for d, _ in train})
    random.Random(args.seed).shuffle(dialogues)
    held = set(dialogues[: len(dialogues) // 10])
    fit_rows = [row for d, row in train if d not in held]
    valid_rows = [row for d, row in train if d in held]
    frequency = Counter(g for text, _, _ in fit_rows for g in text_features(text))
    vocabulary = {
        g: i for i, g in enumerate(sorted(g for g, n in frequency.items() if n >= args.min_df))
    }
    print(f"train rows {len(fit_rows)}, validation {len(valid_rows)}, n-grams {len(vocabulary)}")
    tried = {}
    for c in (4.0, 16.0, 64.0):
        tried[c] = scores(fit(fit_rows, vocabulary, c), valid_rows, vocabulary)["accuracy"]
        print(f"  C={c}: validation accuracy {tried[c]}")
    best = max(tried, key=tried.__getitem__)
    rows = [row for _, row in train]
    frequency = Counter(g for text, _, _ in rows for g in text_features(text))
    vocabulary = {
        g: i for i, g in enumerate(sorted(g for g, n in frequency.items() if n >= args.min_df))
    }
    model = fit(rows, vocabulary, best)
    seen = {s["service_name"] for s in json.loads(args.train_schema.read_text(encoding="utf-8"))}
    dev = [row for _, row in system_rows(args.dev)]
    report = {
        "dev_all": scores(model, dev, vocabulary),
        "dev_seen_services": scores(model, [r for r in dev if r[2] <= seen], vocabulary),
        "dev_unseen_services": scores(model, [r for r in dev if r[2] - seen], vocabulary),
    }
    print(json.dumps(report, indent=1))
    labels = tuple(str(name) for name in model.classes_)
    metadata = {
        "trained_on": (
            "SGD train system utterances (Rastogi et al. 2020, CC BY-SA 4.0), their annotated "
            "dialogue acts as labels"
        ),
        "labels_by_priority": [name for name, _ in PRIORITY] + ["other"],
        "regularisation_C": best,
        "validation_accuracy_by_C": {str(c): a for c, a in tried.items()},
        "min_df": args.min_df,
        "seed": args.seed,
        "sklearn": sklearn.__version__,
        **report,
    }
    SystemActModel(
        vocabulary=vocabulary,
        weights=model.coef_.T.astype(np.float32),
        bias=model.intercept_.astype(np.float32),
        labels=labels,  # type: ignore[arg-type]
        metadata=metadata,
    ).save(args.out)
    print(f"wrote {args.out} and {args.out.with_suffix('.json')}")


if __name__ == "__main__":
    main()
