"""Train the learned local turn-quality teachers (``make train-turn-quality``).

Reproducible with ``--seed``: labelled views from SGD train (training) and SGD dev (cut-offs)
are built by ``scripts/turn_quality_data.py``; the held-out services and ``data/validation/``
are never read. Steps:

1. Evidence blocks R, C, N per view (``evidence.py``, MiniLM through the disk cache).
2. One evidence model per block: ``StandardScaler + LogisticRegression(C=0.05, balanced)``
   with sigmoid calibration (``CalibratedClassifierCV``, folds grouped by dialogue). R and C
   never see failures only a reaction shows; N never sees a corrupted reply paired with the
   real next turn (that user reacted to the original reply).
3. Per teacher a logistic stacker over the out-of-fold calibrated log-odds of its two blocks,
   restated at a deployment prior of :data:`PRIOR` failed turns; for the reaction teachers a
   one-input stacker for the last turn. A multinomial root-cause model per teacher.
4. Cut-offs per teacher on SGD dev (``scripts/turn_quality_thresholds.py``).

Writes ``nodes/goal_success/judges/turn_quality/turn_quality.{npz,json}`` (no pickles).
Training only needs scikit-learn (the ``dev`` extra); inference is numpy.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import sklearn  # type: ignore[import-untyped]
from numpy.typing import NDArray
from sklearn.calibration import CalibratedClassifierCV  # type: ignore[import-untyped]
from sklearn.linear_model import LogisticRegression  # type: ignore[import-untyped]
from sklearn.model_selection import GroupKFold, cross_val_predict  # type: ignore[import-untyped]
from sklearn.pipeline import Pipeline, make_pipeline  # type: ignore[import-untyped]
from sklearn.preprocessing import StandardScaler  # type: ignore[import-untyped]

from scripts.turn_quality_data import REACTION_ONLY, SIZES, LabelledView, labelled_sets
from scripts.turn_quality_thresholds import choose_bands
from todeval.nodes.goal_success.judges.turn_quality.evidence import (
    BLOCKS,
    EvidenceBlocks,
    evidence_blocks,
    view_texts,
)
from todeval.nodes.goal_success.judges.turn_quality.learned import MODEL_DIR, TurnQualityModel
from todeval.stores.embeddings import get_embedder

PRIOR = 0.06
"""Share of failed turns the probabilities are stated at (USS: ~6% of turns rated <= 2)."""
TEACHERS = {"turn": ("R", "C"), "reply-reaction": ("R", "N"), "fit-reaction": ("C", "N")}
REGULARISATION = 0.05
FOLDS = 5
TRAINED_ON = (
    "SGD train (Rastogi et al. 2020, CC BY-SA 4.0) without the held-out services "
    "Banks_1, Events_1, Flights_2, Hotels_2, Music_1, RentalCars_2, RideSharing_1, Services_2: "
    "real turns with SGD's recorded failures (NOTIFY_FAILURE, corrections, rejected offers) and "
    "failures the todeval team made from real turns (E1-E7) with written reactions "
    "(Apache-2.0); cut-offs chosen on SGD dev"
)
Array = NDArray[Any]


def embed_table(views: Sequence[LabelledView]) -> dict[str, NDArray[np.float32]]:
    """Every distinct text of ``views`` embedded once, in large batches."""
    texts = view_texts([v.view for v in views])
    embedder = get_embedder()
    table: dict[str, NDArray[np.float32]] = {}
    started = time.perf_counter()
    for start in range(0, len(texts), 4096):
        batch = texts[start : start + 4096]
        table.update(zip(batch, embedder.embed(batch), strict=True))
        done = start + len(batch)
        print(f"  embedded {done}/{len(texts)} ({done / (time.perf_counter() - started):.0f}/s)")
    return table


def blocks_of(views: Sequence[LabelledView]) -> EvidenceBlocks:
    """The evidence blocks of ``views``."""
    table = embed_table(views)
    return evidence_blocks(
        [v.view for v in views], lambda texts: np.stack([table[t] for t in texts])
    )


def evidence_model() -> Pipeline:
    """One block's classifier before calibration."""
    lr = LogisticRegression(C=REGULARISATION, class_weight="balanced", max_iter=3000)
    return make_pipeline(StandardScaler(), lr)


def fit_block(
    x: Array, y: Array, mask: Array, folds: list[tuple[Array, Array]]
) -> tuple[dict[str, Array], Array]:
    """The calibrated model of one block and its out-of-fold log-odds for every row.

    Rows outside ``mask`` are never trained on; they get the fold model's log-odds like the
    rest (the folds group rows by dialogue, so no row is scored by a model that saw its dialogue).
    """
    index = np.flatnonzero(mask)
    position = -np.ones(len(y), dtype=int)
    position[index] = np.arange(len(index))
    masked_folds = [(position[tr[mask[tr]]], position[te[mask[te]]]) for tr, te in folds]
    model = CalibratedClassifierCV(
        evidence_model(), method="sigmoid", cv=masked_folds, ensemble=False
    )
    model.fit(x[index], y[index])
    calibrated = model.calibrated_classifiers_[0]
    pipe, sigmoid = calibrated.estimator, calibrated.calibrators[0]
    a, b = float(sigmoid.a_), float(sigmoid.b_)
    decision = np.zeros(len(y))
    for tr, te in folds:
        fold = evidence_model().fit(x[tr[mask[tr]]], y[tr[mask[tr]]])
        decision[te] = fold.decision_function(x[te])
    params = {
        "mean": pipe[0].mean_,
        "scale": pipe[0].scale_,
        "coef": pipe[-1].coef_[0],
        "intercept": pipe[-1].intercept_,
        "platt": np.array([a, b]),
    }
    return params, -(a * decision + b)


def prior_shift(y: Array) -> float:
    """What moves log-odds from the training mix of ``y`` to :data:`PRIOR`."""
    rate = float(np.mean(y))
    return float(np.log(PRIOR / (1 - PRIOR)) - np.log(rate / (1 - rate)))


def fit_stacker(columns: list[Array], y: Array) -> dict[str, Array]:
    """A logistic stacker over log-odds columns, its intercept moved to :data:`PRIOR`."""
    stacker = LogisticRegression(C=1.0).fit(np.column_stack(columns), y)
    return {"coef": stacker.coef_[0], "intercept": stacker.intercept_ + prior_shift(y)}


def fit_codes(x: Array, codes: Array, groups: Array) -> tuple[dict[str, Array], list[str], float]:
    """A multinomial root-cause model, its classes and its grouped cross-validated accuracy."""
    pipe = make_pipeline(StandardScaler(), LogisticRegression(C=REGULARISATION, max_iter=3000))
    predicted = cross_val_predict(pipe, x, codes, groups=groups, cv=GroupKFold(FOLDS))
    pipe.fit(x, codes)
    params = {
        "mean": pipe[0].mean_,
        "scale": pipe[0].scale_,
        "coef": pipe[-1].coef_,
        "intercept": pipe[-1].intercept_,
    }
    return params, [str(c) for c in pipe[-1].classes_], float(np.mean(predicted == codes))


def train(views: list[LabelledView]) -> tuple[dict[str, Array], dict[str, Any]]:
    """Every array of the model file, and the metadata that goes with them."""
    started = time.perf_counter()
    blocks = blocks_of(views)
    print(f"evidence blocks: {len(views)} rows, {time.perf_counter() - started:.0f} s", flush=True)
    y = np.array([v.label for v in views])
    groups = np.array([v.dialogue for v in views])
    kind = np.array([v.kind for v in views])
    has_next = blocks.has_next
    folds = list(GroupKFold(n_splits=FOLDS).split(y, y, groups))
    reply_side = ~np.isin(kind, list(REACTION_ONLY))
    masks = {"R": reply_side, "C": reply_side, "N": has_next & (kind != "corrupt:benign")}
    arrays: dict[str, Array] = {}
    oof: dict[str, Array] = {}
    base_rates: dict[str, float] = {}
    for name in BLOCKS:
        tic = time.perf_counter()
        params, oof[name] = fit_block(blocks.block(name), y, masks[name], folds)
        arrays.update({f"base_{name}_{k}": v for k, v in params.items()})
        base_rates[name] = float(y[masks[name]].mean())
        print(f"evidence model {name}: {masks[name].sum()} rows, {base_rates[name]:.2f} failed, "
              f"{time.perf_counter() - tic:.0f} s", flush=True)  # fmt: skip
    teachers: dict[str, Any] = {}
    codes = np.array([v.code or "" for v in views])
    failed = (y == 1) & (codes != "")
    for key, (first, second) in TEACHERS.items():
        rows = has_next if "N" in (first, second) else np.ones(len(y), dtype=bool)
        stack = fit_stacker([oof[first][rows], oof[second][rows]], y[rows])
        arrays.update({f"stack_{key}_{k}": v for k, v in stack.items()})
        if "N" in (first, second):
            side = first if second == "N" else second
            alone = fit_stacker([oof[side]], y)
            arrays.update({f"alone_{key}_{k}": v for k, v in alone.items()})
        tic = time.perf_counter()
        x = np.hstack([blocks.block(first), blocks.block(second), has_next[:, None]])
        params, classes, accuracy = fit_codes(x[failed], codes[failed], groups[failed])
        arrays.update({f"ecode_{key}_{k}": v for k, v in params.items()})
        teachers[key] = {
            "blocks": [first, second],
            "stacker": [round(float(w), 3) for w in stack["coef"]],
            "code_classes": classes,
            "code_cv_accuracy": round(accuracy, 3),
        }
        print(f"teacher {key}: stacker {teachers[key]['stacker']}, root-cause cv accuracy "
              f"{accuracy:.2f} ({time.perf_counter() - tic:.0f} s)", flush=True)  # fmt: skip
    meta = {
        "prior": PRIOR,
        "base_rates": base_rates,
        "teachers": teachers,
        "training_rows": int(len(y)),
        "training_failures": int(y.sum()),
        "training_kinds": dict(sorted(Counter(kind.tolist()).items())),
    }
    return arrays, meta


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--dialogues", type=int, default=SIZES["train"], help="training dialogues")
    parser.add_argument("--out", type=Path, default=MODEL_DIR, help="where the model files go")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    sets = labelled_sets(args.seed, ("train", "dev"), args.dialogues)
    train_views = [v for v in sets["train"] if v.weight > 0]
    dev_views = [v for v in sets["dev"] if v.weight > 0]
    print(f"views: train {len(train_views)} ({len({v.dialogue for v in train_views})} dialogues), "
          f"dev {len(dev_views)} ({time.perf_counter() - started:.0f} s)", flush=True)  # fmt: skip
    arrays, meta = train(train_views)
    arrays32 = {name: np.asarray(value, np.float32) for name, value in arrays.items()}
    meta |= {
        "trained_on": TRAINED_ON,
        "seed": args.seed,
        "training_dialogues": len({v.dialogue for v in train_views}),
        "dev_rows": len(dev_views),
        "scikit_learn": sklearn.__version__,
    }
    bands = choose_bands(TurnQualityModel(arrays32, meta), dev_views, blocks_of(dev_views))
    for key, band in bands.items():
        meta["teachers"][key].update(band)
        print(f"teacher {key}: {band}")
    meta["training_seconds"] = round(time.perf_counter() - started)
    args.out.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(args.out / "turn_quality.npz", **arrays32)  # type: ignore[arg-type]
    (args.out / "turn_quality.json").write_text(json.dumps(meta, indent=2) + "\n")
    print(f"wrote {args.out}/turn_quality.{{npz,json}} in {meta['training_seconds']} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
