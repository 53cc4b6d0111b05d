"""A small binary classifier in numpy for the local judges trained on public data.

One hidden ReLU layer, small enough to ship as an ``.npz``; no torch, no scikit-learn.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float32]


@dataclass
class TrainingConfig:
    """Hyper-parameters of :meth:`MLPClassifier.fit`."""

    hidden: int = 128
    epochs: int = 30
    batch_size: int = 256
    learning_rate: float = 1e-3
    weight_decay: float = 1e-4
    patience: int = 4
    seed: int = 13


@dataclass
class MLPClassifier:
    """``p(y=1 | x) = sigmoid(w2 · relu(W1 · standardise(x) + b1) + b2)``."""

    w1: FloatArray
    b1: FloatArray
    w2: FloatArray
    b2: FloatArray
    mean: FloatArray
    scale: FloatArray
    threshold: float = 0.5
    metadata: dict[str, Any] = field(default_factory=dict)

    def logits(self, features: FloatArray) -> FloatArray:
        """Log-odds of the positive class for each row."""
        return self._logits(features, max(len(features), 1))

    def predict_proba(self, features: FloatArray) -> FloatArray:
        """Probability of the positive class for each row."""
        return _sigmoid(self.logits(features))

    def predict_proba_blocks(self, features: FloatArray, block: int) -> FloatArray:
        """:meth:`predict_proba` of each run of ``block`` rows, stacked: the same bits.

        Only the two matrix products run per block (a product over more rows may round
        otherwise); the element-wise steps around them give the same bits over any number of
        rows, so they run once over every block (a dialogue's utterances, a dozen numpy calls
        fewer per utterance).
        """
        if block <= 0 or len(features) % block:
            raise ValueError(f"{len(features)} rows are not runs of {block}")
        return _sigmoid(self._logits(features, block))

    def _logits(self, features: FloatArray, block: int) -> FloatArray:
        """:meth:`logits`, the matrix products over each run of ``block`` rows."""
        standard = (features - self.mean) / self.scale
        products = np.empty((len(features), self.w1.shape[1]), np.result_type(standard, self.w1))
        for start in range(0, len(features), block):
            products[start : start + block] = standard[start : start + block] @ self.w1
        hidden = np.maximum(products + self.b1, 0.0)
        out = np.empty((len(features), self.w2.shape[1]), np.result_type(hidden, self.w2))
        for start in range(0, len(features), block):
            out[start : start + block] = hidden[start : start + block] @ self.w2
        return np.asarray(out + self.b2, dtype=np.float32).reshape(-1)

    def save(self, path: Path) -> None:
        """Write weights to ``path`` (.npz) and the threshold/metadata beside it (.json)."""
        np.savez_compressed(
            path,
            w1=self.w1.astype(np.float16),
            b1=self.b1,
            w2=self.w2,
            b2=self.b2,
            mean=self.mean,
            scale=self.scale,
        )
        sidecar = {"threshold": self.threshold, "metadata": self.metadata}
        path.with_suffix(".json").write_text(json.dumps(sidecar, indent=2) + "\n")

    @classmethod
    def load(cls, path: Path) -> MLPClassifier:
        """Read a classifier written by :meth:`save`."""
        with np.load(path) as arrays:
            weights = {name: arrays[name].astype(np.float32) for name in arrays.files}
        sidecar = json.loads(path.with_suffix(".json").read_text())
        return cls(threshold=float(sidecar["threshold"]), metadata=sidecar["metadata"], **weights)

    @classmethod
    def fit(
        cls,
        features: FloatArray,
        labels: NDArray[np.bool_],
        *,
        valid_features: FloatArray,
        valid_labels: NDArray[np.bool_],
        config: TrainingConfig | None = None,
    ) -> MLPClassifier:
        """Train; keep the epoch with the lowest validation loss.

        Positives are re-weighted (new-goal turns are rare); the threshold is tuned for F1 on the
        validation split.
        """
        cfg = config or TrainingConfig()
        rng = np.random.default_rng(cfg.seed)
        mean = features.mean(axis=0).astype(np.float32)
        scale = (features.std(axis=0) + 1e-6).astype(np.float32)
        model = cls(
            w1=(
                rng.standard_normal((features.shape[1], cfg.hidden))
                * np.sqrt(2.0 / features.shape[1])
            ).astype(np.float32),
            b1=np.zeros(cfg.hidden, np.float32),
            w2=(rng.standard_normal((cfg.hidden, 1)) * np.sqrt(1.0 / cfg.hidden)).astype(
                np.float32
            ),
            b2=np.zeros(1, np.float32),
            mean=mean,
            scale=scale,
        )
        y = labels.astype(np.float32)
        pos_weight = float((1.0 - y.mean()) / max(y.mean(), 1e-6))
        adam = _Adam([model.w1, model.b1, model.w2, model.b2], cfg.learning_rate)
        best_loss, best, stale = np.inf, model._weights(), 0
        for _ in range(cfg.epochs):
            order = rng.permutation(len(y))
            for start in range(0, len(y), cfg.batch_size):
                batch = order[start : start + cfg.batch_size]
                grads = model._gradients(features[batch], y[batch], pos_weight, cfg.weight_decay)
                adam.step(grads)
            loss = _bce(
                model.predict_proba(valid_features), valid_labels.astype(np.float32), pos_weight
            )
            if loss < best_loss - 1e-4:
                best_loss, best, stale = loss, model._weights(), 0
            else:
                stale += 1
                if stale >= cfg.patience:
                    break
        model.w1, model.b1, model.w2, model.b2 = best
        model.threshold = best_f1_threshold(model.predict_proba(valid_features), valid_labels)
        model.metadata["training"] = asdict(cfg) | {"validation_loss": float(best_loss)}
        return model

    def _weights(self) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        return self.w1.copy(), self.b1.copy(), self.w2.copy(), self.b2.copy()

    def _gradients(
        self, x: FloatArray, y: FloatArray, pos_weight: float, weight_decay: float
    ) -> list[FloatArray]:
        z = (x - self.mean) / self.scale
        pre = z @ self.w1 + self.b1
        hidden = np.maximum(pre, 0.0)
        prob = _sigmoid((hidden @ self.w2 + self.b2).reshape(-1))
        weight = np.where(y > 0.5, pos_weight, 1.0).astype(np.float32)
        d_logit = ((prob - y) * weight / weight.sum()).reshape(-1, 1).astype(np.float32)
        d_hidden = (d_logit @ self.w2.T) * (pre > 0)
        return [
            z.T @ d_hidden + weight_decay * self.w1,
            d_hidden.sum(axis=0),
            hidden.T @ d_logit + weight_decay * self.w2,
            d_logit.sum(axis=0),
        ]


def best_f1_threshold(probabilities: FloatArray, labels: NDArray[np.bool_]) -> float:
    """The probability cut-off that maximises F1 on held-out data."""
    best_threshold, best_f1 = 0.5, -1.0
    for threshold in np.linspace(0.05, 0.95, 91):
        predicted = probabilities >= threshold
        tp = float(np.sum(predicted & labels))
        denominator = float(predicted.sum() + labels.sum())
        f1 = 2 * tp / denominator if denominator else 0.0
        if f1 > best_f1:
            best_threshold, best_f1 = float(threshold), f1
    return round(best_threshold, 2)


def _sigmoid(x: FloatArray) -> FloatArray:
    return (1.0 / (1.0 + np.exp(-np.clip(x, -30.0, 30.0)))).astype(np.float32)


def _bce(prob: FloatArray, y: FloatArray, pos_weight: float) -> float:
    prob = np.clip(prob, 1e-7, 1 - 1e-7)
    weight = np.where(y > 0.5, pos_weight, 1.0)
    losses = -(y * np.log(prob) + (1 - y) * np.log(1 - prob)) * weight
    return float(losses.sum() / weight.sum())


class _Adam:
    """Adam on a list of arrays updated in place."""

    def __init__(self, params: list[FloatArray], lr: float) -> None:
        self.params, self.lr, self.t = params, lr, 0
        self.m = [np.zeros_like(p) for p in params]
        self.v = [np.zeros_like(p) for p in params]

    def step(self, grads: list[FloatArray]) -> None:
        self.t += 1
        for param, grad, m, v in zip(self.params, grads, self.m, self.v, strict=True):
            m *= 0.9
            m += 0.1 * grad
            v *= 0.999
            v += 0.001 * grad * grad
            m_hat = m / (1 - 0.9**self.t)
            v_hat = v / (1 - 0.999**self.t)
            param -= (self.lr * m_hat / (np.sqrt(v_hat) + 1e-8)).astype(np.float32)
