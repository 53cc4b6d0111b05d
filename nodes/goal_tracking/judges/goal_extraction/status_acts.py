"""What a system utterance does to a goal, read by a linear model learned from SGD (ATOD §5.2).

The local status judge needs the dialogue act of each system utterance, in words: it reports a
booking or purchase done (SGD's ``NOTIFY_SUCCESS``), reports that it could not (``NOTIFY_FAILURE``),
asks the user to confirm a transaction's details (``CONFIRM``), presents search results
(``OFFER`` / ``INFORM_COUNT``), or none of these. :class:`SystemActModel` is a multinomial logistic
regression over the utterance's word unigrams and bigrams, trained on the system utterances of
SGD train (``scripts/train_status_acts.py``; CC BY-SA 4.0), where the acts are annotated, and
checked on SGD dev, split into services seen in train and services that are not. Inference is
numpy over ``status_acts.npz`` (weights, vocabulary) and ``status_acts.json`` (labels, training
data and figures); no pickles, no scikit-learn.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

SystemAct = Literal["success", "failure", "confirm", "results", "other"]
"""The acts the model tells apart, as the tracker uses them."""

SYSTEM_ACTS: tuple[SystemAct, ...] = ("success", "failure", "confirm", "results", "other")

MODEL_PATH = Path(__file__).parent / "status_acts.npz"
"""The shipped weights and vocabulary; labels and figures are in the ``.json`` beside it."""

_TOKEN = re.compile(r"[a-z]+(?:'[a-z]+)?|\d+|[?!$]")
_ED = "_ed"


def text_features(text: str) -> list[str]:
    """The distinct word unigrams and bigrams of ``text`` (lower case, digits as ``0``).

    Bigrams include the start and end markers ``<s>`` and ``</s>``, so "please confirm" at the
    start of an utterance differs from one in its middle. Bigrams are also taken with every
    past participle as ``_ed`` ("been _ed"), so "the movie has been rented" reads like "the
    table has been booked" for a service the training data never had.
    """
    tokens = ["0" if t.isdigit() else t for t in _TOKEN.findall(text.lower())]
    bounded = ["<s>", *tokens, "</s>"]
    grams = tokens + [f"{a} {b}" for a, b in zip(bounded, bounded[1:], strict=False)]
    abstract = [_ED if len(t) > 4 and t.endswith("ed") else t for t in bounded]
    grams += [f"{a} {b}" for a, b in zip(abstract, abstract[1:], strict=False) if _ED in (a, b)]
    return list(dict.fromkeys(grams))


@dataclass(frozen=True)
class ActReading:
    """The act the model reads in an utterance and its probability."""

    act: SystemAct
    probability: float
    probabilities: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class SystemActModel:
    """``softmax(W · x + b)`` over binary n-gram features ``x`` scaled to unit length.

    Attributes:
        vocabulary: n-gram -> column of ``weights``.
        weights: ``(len(vocabulary), len(labels))``.
        bias: ``(len(labels),)``.
        labels: The class of each output column.
        metadata: Training data, figures and settings (the model card).
    """

    vocabulary: dict[str, int]
    weights: NDArray[np.float32]
    bias: NDArray[np.float32]
    labels: tuple[SystemAct, ...]
    metadata: dict[str, Any] = field(default_factory=dict)
    _margin_cache: dict[int, NDArray[np.float32]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def probabilities(self, text: str) -> NDArray[np.float32]:
        """Class probabilities (order of ``labels``) for one utterance."""
        columns = [self.vocabulary[g] for g in text_features(text) if g in self.vocabulary]
        logits = self.bias.astype(np.float64)
        if columns:
            logits = logits + self.weights[columns].sum(axis=0) / np.sqrt(len(columns))
        exp = np.exp(logits - logits.max())
        probabilities: NDArray[np.float32] = (exp / exp.sum()).astype(np.float32)
        return probabilities

    def read(self, text: str) -> ActReading:
        """The most probable act of ``text``."""
        probabilities = self.probabilities(text)
        best = int(np.argmax(probabilities))
        return ActReading(
            self.labels[best],
            float(probabilities[best]),
            {
                label: round(float(p), 4)
                for label, p in zip(self.labels, probabilities, strict=True)
            },
        )

    def evidence(self, text: str, act: SystemAct) -> str:
        """The n-gram of ``text`` that speaks most for ``act`` over the other acts ("" if none)."""
        if act not in self.labels:
            return ""
        column = self.labels.index(act)
        best, weight = "", 0.0
        for gram in text_features(text):
            row = self.vocabulary.get(gram)
            if row is None or any(mark in gram for mark in ("<s>", "</s>", _ED)):
                continue
            margin = float(self._margins(column)[row])
            if margin > weight:
                best, weight = gram, margin
        return best

    def _margins(self, column: int) -> NDArray[np.float32]:
        """Each n-gram's weight for ``column`` over its mean weight for the others (cached)."""
        cached = self._margin_cache.get(column)
        if cached is None:
            others = np.delete(self.weights, column, axis=1).mean(axis=1)
            cached = self._margin_cache[column] = self.weights[:, column] - others
        return cached

    def save(self, path: Path) -> None:
        """Write weights and vocabulary to ``path`` (.npz), labels and metadata to the .json."""
        grams = "\n".join(sorted(self.vocabulary, key=self.vocabulary.__getitem__))
        vocabulary = np.frombuffer(grams.encode("utf-8"), dtype=np.uint8)
        np.savez_compressed(
            path, weights=self.weights.astype(np.float16), bias=self.bias, vocabulary=vocabulary
        )
        card = {"labels": list(self.labels), "metadata": self.metadata}
        path.with_suffix(".json").write_text(json.dumps(card, indent=1) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: Path = MODEL_PATH) -> SystemActModel:
        """Read a model written by :meth:`save`.

        Raises:
            FileNotFoundError: No model at ``path`` (``scripts/train_status_acts.py`` writes it).
        """
        if not path.exists():
            raise FileNotFoundError(
                f"No system-act model at {path}; run `python -m scripts.train_status_acts`."
            )
        arrays = np.load(path, allow_pickle=False)
        card = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
        labels = tuple(card["labels"])
        if not set(labels) <= set(SYSTEM_ACTS):
            raise ValueError(f"unknown labels in {path}: {labels}")
        return cls(
            vocabulary={gram: i for i, gram in enumerate(_grams(arrays["vocabulary"]))},
            weights=arrays["weights"].astype(np.float32),
            bias=arrays["bias"].astype(np.float32),
            labels=labels,
            metadata=card.get("metadata", {}),
        )


def _grams(stored: NDArray[np.uint8]) -> list[str]:
    """The vocabulary as saved: its n-grams in column order, UTF-8, one per line."""
    return stored.tobytes().decode("utf-8").split("\n")


@functools.lru_cache(maxsize=1)
def system_act_model() -> SystemActModel:
    """The shipped model, loaded on first use."""
    return SystemActModel.load()


def system_act(text: str) -> ActReading:
    """The act of a system utterance, by the shipped model."""
    return system_act_model().read(text)
