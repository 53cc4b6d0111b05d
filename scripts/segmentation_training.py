"""The pieces of ``scripts/train_segmenter.py``: embeddings, feature rows, the two models.

Training only needs scikit-learn (the ``dev`` extra); what it writes is read with numpy.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import sparse
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GroupKFold

from todeval.evals.metrics.goal_success.segmentation import segmentation_report
from todeval.evals.schema import Dialogue
from todeval.nodes.context import Context
from todeval.nodes.goal_success.judges.segmentation import (
    LearnedSegmenter,
    decode_greedy,
    long_pauses,
)
from todeval.nodes.goal_success.judges.segmentation.discourse import (
    N_BUCKETS,
    DiscourseCueModel,
    cue_buckets,
)
from todeval.nodes.goal_success.judges.segmentation.features import ActPrototypes, turn_texts
from todeval.nodes.goal_success.judges.segmentation.goal_features import (
    FEATURE_NAMES,
    DialogueView,
    turn_row,
)
from todeval.nodes.judges.trees import BoostedTrees, complete_tree
from todeval.stores.embeddings import get_embedder

FloatArray = NDArray[np.float32]


class TableEmbed:
    """Embeddings looked up in a table filled once, in large batches (cache-backed)."""

    def __init__(self, dialogues: Sequence[Dialogue]) -> None:
        texts = sorted({text for d in dialogues for part in turn_texts(d) for text in part})
        self.table: dict[str, FloatArray] = {}
        started = time.perf_counter()
        for first in range(0, len(texts), 8192):
            batch = texts[first : first + 8192]
            self.table.update(zip(batch, get_embedder().embed(batch), strict=True))
            rate = len(self.table) / (time.perf_counter() - started)
            print(f"  embedded {len(self.table)}/{len(texts)} texts ({rate:.0f}/s)", flush=True)

    def __call__(self, texts: Sequence[str]) -> FloatArray:
        missing = [text for text in dict.fromkeys(texts) if text not in self.table]
        if missing:  # act prototypes, texts of other sets
            self.table.update(zip(missing, get_embedder().embed(missing), strict=True))
        return np.stack([self.table[text] for text in texts])


def labelled_turns(dialogues: Sequence[Dialogue]) -> list[tuple[int, str, bool]]:
    """``(dialogue index, user message, gold)`` for turns 2..N."""
    rows = []
    for index, dialogue in enumerate(dialogues):
        gold = dialogue.gold_new_goal_labels() or []
        for j in range(1, len(dialogue.turns)):
            rows.append((index, dialogue.turns[j].user_msg, gold[j]))
    return rows


def cue_matrix(turns: Sequence[tuple[int, str, bool]]) -> sparse.csr_matrix:
    """Binary hashed n-gram features, one row per turn."""
    indptr, indices = [0], []
    for _, user_msg, _ in turns:
        indices.extend(cue_buckets(user_msg))
        indptr.append(len(indices))
    data = np.ones(len(indices), dtype=np.float32)
    return sparse.csr_matrix((data, indices, indptr), shape=(len(turns), N_BUCKETS))


def fit_cue_model(
    turns: Sequence[tuple[int, str, bool]], weights: FloatArray, *, c: float, seed: int
) -> tuple[DiscourseCueModel, FloatArray]:
    """The discourse-cue model on every turn, and out-of-fold logits for stacking.

    Returns:
        The model fitted on all turns, and per turn its logit from a model that did not see
        that turn's dialogue (5 folds by dialogue).
    """
    matrix = cue_matrix(turns)
    labels = np.array([gold for *_, gold in turns])
    groups = np.array([index for index, *_ in turns])
    out_of_fold = np.zeros(len(turns), dtype=np.float32)

    def fit(rows: NDArray[np.intp]) -> LogisticRegression:
        model = LogisticRegression(C=c, max_iter=2000, random_state=seed)
        return model.fit(matrix[rows], labels[rows], sample_weight=weights[rows])

    for train, test in GroupKFold(n_splits=5).split(matrix, labels, groups):
        out_of_fold[test] = fit(train).decision_function(matrix[test])
    full = fit(np.arange(len(turns)))
    model = DiscourseCueModel(full.coef_[0].astype(np.float32), float(full.intercept_[0]))
    return model, out_of_fold


def feature_rows(
    dialogues: Sequence[Dialogue],
    embed: TableEmbed,
    cue_logits: FloatArray | None,
    cues: DiscourseCueModel | None = None,
) -> tuple[FloatArray, NDArray[np.bool_]]:
    """Rows for turns 2..N of every dialogue, each against its *gold* current goal.

    ``cue_logits`` (one per turn 2..N, in order) replace the cue model's own scores: the
    out-of-fold logits, so the trees do not learn to trust a cue model that saw the turn.
    """
    prototypes = ActPrototypes.embed_with(embed)
    rows: list[FloatArray] = []
    labels: list[bool] = []
    offset = 0
    for dialogue in dialogues:
        gold = dialogue.gold_new_goal_labels() or []
        view = DialogueView.build(dialogue, embed, prototypes, cues)
        n = len(dialogue.turns)
        if cue_logits is not None:
            logits = np.concatenate([[0.0], cue_logits[offset : offset + n - 1]])
            view = dataclasses.replace(view, cue_logits=logits.astype(np.float32))
        offset += n - 1
        start = 0
        for j in range(1, n):
            rows.append(turn_row(view, j, start))
            labels.append(gold[j])
            if gold[j]:
                start = j
    if not rows:
        return np.zeros((0, len(FEATURE_NAMES)), np.float32), np.zeros(0, bool)
    return np.stack(rows), np.asarray(labels, dtype=bool)


def fit_trees(
    rows: FloatArray,
    labels: NDArray[np.bool_],
    weights: FloatArray,
    *,
    trees: int,
    depth: int,
    learning_rate: float,
    seed: int,
) -> BoostedTrees:
    """Histogram gradient boosting (log-loss) exported to :class:`BoostedTrees`.

    The export reads each fitted tree's node table (scikit-learn's ``_predictors``, pinned by
    the ``dev`` extra) and is checked against ``decision_function`` before it is returned.
    """
    booster = HistGradientBoostingClassifier(
        max_iter=trees,
        max_depth=depth,
        learning_rate=learning_rate,
        min_samples_leaf=20,
        l2_regularization=1.0,
        early_stopping=False,
        random_state=seed,
    )
    booster.fit(rows, labels, sample_weight=weights)
    arrays = []
    for (predictor,) in booster._predictors:
        nodes = predictor.nodes
        arrays.append(
            complete_tree(
                np.where(nodes["is_leaf"], -1, nodes["left"].astype(np.int64)),
                nodes["right"].astype(np.int64),
                nodes["feature_idx"].astype(np.int64),
                nodes["num_threshold"].astype(np.float64),
                nodes["value"].astype(np.float64),
                depth,
            )
        )
    model = BoostedTrees(
        feature=np.stack([a[0] for a in arrays]),
        threshold=np.stack([a[1] for a in arrays]),
        leaf=np.stack([a[2] for a in arrays]),
        base=float(np.ravel(booster._baseline_prediction)[0]),
        feature_names=FEATURE_NAMES,
    )
    check = rows[:: max(1, len(rows) // 5000)]
    gap = float(np.abs(model.logits(check) - booster.decision_function(check)).max())
    if gap > 1e-3:
        raise RuntimeError(f"exported trees differ from scikit-learn by {gap:.2g}")
    return model


class DecodingSet:
    """Dialogues with their feature views built once, to decode at many thresholds."""

    def __init__(self, judge: LearnedSegmenter, dialogues: Sequence[Dialogue]) -> None:
        self.model = judge.model
        self.items = [
            (
                DialogueView.build(dialogue, judge.embed, judge.prototypes, judge.cues),
                long_pauses(dialogue, Context.time_gap_minutes),
                dialogue.gold_new_goal_labels() or [],
            )
            for dialogue in dialogues
        ]

    def report(self, threshold: float | None = None) -> dict[str, Any]:
        """Segmentation metrics when decoding at ``threshold`` (default: the model's)."""
        cut = self.model.threshold_probability if threshold is None else threshold
        pairs = []
        for view, paused, gold in self.items:
            probabilities = decode_greedy(self.model, view, paused, cut)
            pairs.append((gold, [True, *(p >= cut for p in probabilities)]))
        return segmentation_report(pairs)
