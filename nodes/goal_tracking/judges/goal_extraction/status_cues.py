"""Local status cues for the goal tracker: what an utterance does to a goal (paper 000, §5.2).

* **System utterances**: the act :class:`SystemActModel` reads: a reported booking or purchase
  (``success``) completes a transaction, a reported failure fails it, a request to confirm
  (``confirm``) leaves it pending, results presented (``results``) complete a lookup.
* **User utterances**: only explicit words: "never mind", "cancel that" abandon a goal; "I'll
  let you know" makes it pending. SGD cannot teach these (its users never turn a transaction
  down outright), so they stay a short list of phrases.

:class:`SystemActModel` is a multinomial logistic regression over word unigrams and bigrams,
trained on SGD train's annotated system acts (``NOTIFY_SUCCESS``, ``NOTIFY_FAILURE``,
``CONFIRM``, ``OFFER`` / ``INFORM_COUNT``, or none; ``scripts/train_status_acts.py``, CC BY-SA
4.0), checked on SGD dev's seen and unseen services; inference is numpy over
``status_acts.npz`` and ``status_acts.json`` beside this module. Which goal a cue applies to
is decided by :mod:`~nodes.goal_tracking.judges.goal_extraction.status_focus`.
"""

from __future__ import annotations

import functools
import json
import math
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from todeval.evals.goal_tracking_schema import GoalStatus
from todeval.nodes.judges.text import cue
from todeval.stores.byte_cache import ENTRY_OVERHEAD, byte_bounded

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
    lowered = text.lower()
    tokens = ["0" if t.isdigit() else t for t in _TOKEN.findall(lowered)]
    bounded = ["<s>", *tokens, "</s>"]
    grams = tokens + [f"{a} {b}" for a, b in zip(bounded, bounded[1:], strict=False)]
    if "ed" in lowered:  # else no token is a past participle (most utterances)
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
    _margin_lists: dict[int, list[float]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def probabilities(self, text: str) -> NDArray[np.float32]:
        """Class probabilities (order of ``labels``) for one utterance."""
        return self.probabilities_of(text_features(text))

    def probabilities_of(self, grams: Sequence[str]) -> NDArray[np.float32]:
        """Class probabilities of an utterance given its :func:`text_features`."""
        columns = [column for column in map(self.vocabulary.get, grams) if column is not None]
        logits = self._bias64
        if columns:
            # take() gathers the same rows as fancy indexing, at half the cost; the reductions
            # are the ufuncs' own (sum() and max() without their Python wrappers: same bits).
            weights = self.weights.take(columns, axis=0)
            logits = logits + np.add.reduce(weights, axis=0) / np.sqrt(len(columns))
        exp = np.exp(logits - np.maximum.reduce(logits))
        probabilities: NDArray[np.float32] = (exp / np.add.reduce(exp)).astype(np.float32)
        return probabilities

    def probabilities_many(self, texts_grams: Sequence[Sequence[str]]) -> NDArray[np.float32]:
        """:meth:`probabilities_of` of several utterances, one row each, the same bits.

        Each row's weights are summed in order along their own axis, as ``add.reduce`` over
        one utterance's rows adds them (``add.reduceat`` does not: it rounds otherwise), the
        shorter rows padded with zero rows at the end (adding 0 changes no sum but the sign
        of a zero, which the bias then absorbs); the steps after the sum are element-wise or
        within a row: the numbers of one call per utterance, in a few numpy calls.
        """
        return self.probabilities_of_known([self.known(grams) for grams in texts_grams])

    def known(self, grams: Sequence[str]) -> list[tuple[str, int]]:
        """The n-grams of ``grams`` in the vocabulary, in order, with their rows of ``weights``.

        The probabilities and the evidence both read them: the vocabulary (a large table) is
        looked up once per n-gram.
        """
        get = self.vocabulary.get
        return [(gram, row) for gram in grams if (row := get(gram)) is not None]

    def probabilities_of_known(
        self, texts_known: Sequence[Sequence[tuple[str, int]]]
    ) -> NDArray[np.float32]:
        """:meth:`probabilities_many` given each utterance's :meth:`known` n-grams."""
        rows = [[c for _, c in known] for known in texts_known]
        counts = np.asarray([len(row) for row in rows], np.intp)
        logits = np.repeat(self._bias64[None, :], len(rows), axis=0)
        found = counts > 0
        if found.any():
            zero = self.weights.shape[0]  # the padded table's zero row
            width = int(counts.max())
            columns = [row + [zero] * (width - len(row)) for row in rows if row]
            weights = self._padded_weights.take(columns, axis=0)  # (utterances, width, labels)
            sums = np.add.reduce(weights, axis=1)
            logits[found] = self._bias64 + sums / np.sqrt(counts[found])[:, None]
        exp = np.exp(logits - np.maximum.reduce(logits, axis=1, keepdims=True))
        sums = np.add.reduce(exp, axis=1, keepdims=True)
        probabilities: NDArray[np.float32] = (exp / sums).astype(np.float32)
        return probabilities

    @functools.cached_property
    def _padded_weights(self) -> NDArray[np.float32]:
        """``weights`` with a zero row after the vocabulary's (made once)."""
        return np.vstack([self.weights, np.zeros((1, self.weights.shape[1]), np.float32)])

    @functools.cached_property
    def _bias64(self) -> NDArray[np.float64]:
        """``bias`` in float64, as the logits start (converted once; read only)."""
        return self.bias.astype(np.float64)

    def read(self, text: str) -> ActReading:
        """The most probable act of ``text``."""
        probabilities = self.probabilities(text)
        act, probability = self.best(probabilities)
        return ActReading(
            act,
            probability,
            {
                label: round(float(p), 4)
                for label, p in zip(self.labels, probabilities, strict=True)
            },
        )

    def best(self, probabilities: NDArray[np.float32]) -> tuple[SystemAct, float]:
        """The most probable act in ``probabilities`` (order of ``labels``), and its probability."""
        best = int(np.argmax(probabilities))
        return self.labels[best], float(probabilities[best])

    def evidence(self, text: str, act: SystemAct) -> str:
        """The n-gram of ``text`` that speaks most for ``act`` over the other acts ("" if none)."""
        return self.evidence_of(text_features(text), act)

    def evidence_of(self, grams: Sequence[str], act: SystemAct) -> str:
        """:meth:`evidence` given the utterance's :func:`text_features`."""
        return self.evidence_of_known(self.known(grams), act)

    def evidence_of_known(self, known: Sequence[tuple[str, int]], act: SystemAct) -> str:
        """:meth:`evidence` given the utterance's :meth:`known` n-grams."""
        if act not in self.labels:
            return ""
        margins = self._margin_values(self.labels.index(act))
        best, weight = "", 0.0
        for gram, row in known:
            margin = margins[row]  # -inf for a gram with a marker: never the evidence
            if margin > weight:
                best, weight = gram, margin
        return best

    def _margin_values(self, column: int) -> list[float]:
        """:meth:`_margins` as Python floats (the same values; cached), read one by one.

        An n-gram with a start, end or ``_ed`` marker is no evidence: its value is -inf, which
        never beats the evidence's least weight (0), so that the n-grams are not searched for
        the markers at every utterance.
        """
        cached = self._margin_lists.get(column)
        if cached is None:
            cached = self._margins(column).tolist()
            for gram, row in self.vocabulary.items():
                if "<s>" in gram or "</s>" in gram or _ED in gram:
                    cached[row] = -math.inf
            self._margin_lists[column] = cached
        return cached

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
        """Read a model written by :meth:`save` (``scripts/train_status_acts.py`` writes it)."""
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


# -- cues --------------------------------------------------------------------------------------

Speaker = Literal["USER", "SYSTEM"]
CueAct = Literal["success", "failure", "confirm", "results", "abandon", "defer"]

#: The least probability of the system-act model for a system cue.
MIN_ACT_PROBABILITY = 0.5

#: The user drops a goal (evidence of abandonment).
USER_ABANDONS = cue(
    r"\b(never ?mind|forget (about )?(it|that|this|the \w+)|cancel (that|it|this|the (request|"
    r"\w+))|don'?t bother|no longer (need|want)|not interested( anymore)?|skip (it|that|the "
    r"\w+)|let'?s drop|drop (it|that|the \w+)|don'?t (need|want) (it|that|the \w+) any ?more)\b|"
    r"\b(no|nah),? (thanks|thank you)[,.]? (i'?ll|i will) (do|handle|sort|figure)\b"
)
#: The user puts the goal on hold (asynchronous: it stays alive, waiting on the user).
USER_DEFERS = cue(
    r"\b(i'?ll|i will|let me) (let you know|get back to you|think about it|check (with|and)|"
    r"decide later|come back)\b|\bnot (right )?now\b|\blater\b[^.?!]{0,20}\b(decide|book|do)\b|"
    r"\bhold (off|on)\b"
)

_SYSTEM_STATUS: dict[str, tuple[CueAct, GoalStatus]] = {
    "success": ("success", "completed"),
    "failure": ("failure", "failed"),
    "confirm": ("confirm", "pending"),
    "results": ("results", "completed"),
}


#: The user agrees to what the system asked them to confirm.
USER_AFFIRMS = cue(
    r"^\W*(yes|yeah|yep|yup|sure|correct|right|exactly|perfect|great|cool|ok(ay)?|fine|"
    r"absolutely|definitely|please do|go ahead|do it|book it|that'?s (right|correct|good|great|"
    r"perfect|fine|it)|that (works|is (right|correct))|sounds (good|great|perfect|right)|"
    r"confirm(ed)?)\b"
)


def user_affirms(utterance: str) -> bool:
    """Whether the user says yes to a confirmation (and not "yes, but change ...")."""
    return bool(USER_AFFIRMS.search(utterance)) and not USER_ABANDONS.search(utterance)


@dataclass(frozen=True)
class StatusCue:
    """A status an utterance signals, the act behind it, and the words that signalled it.

    ``act`` is ``success``/``failure``/``confirm``/``results`` (system) or ``abandon``/``defer``
    (user); ``confidence`` is the model's for a system act, 1.0 for the user's words.
    """

    status: GoalStatus
    evidence: str
    act: CueAct = "success"
    confidence: float = 1.0

    @property
    def for_lookups(self) -> bool:
        """Whether the cue concerns a lookup only: results presented."""
        return self.act == "results"


def _cue_entry_size(utterance: str, entry: tuple[StatusCue | None]) -> int:
    """What :func:`~stores.byte_cache.entry_size` counts for a cue, without its generic walk.

    The utterance, the 1-tuple, the cue (or None) and its four fields: a cue's shape is known,
    so the count is the same in a seventh of the time (a cue is taken for about 20,000
    distinct system utterances on SGD dev, and each is put).
    """
    cue = entry[0]
    fields = () if cue is None else (cue.status, cue.evidence, cue.act, cue.confidence)
    parts = (utterance, entry, cue, *fields)
    return sum(map(sys.getsizeof, parts)) + ENTRY_OVERHEAD


# System utterances recur across dialogues ("Is there anything else I can help you with?").
# An SGD dev entry (utterance, cue) is 380 bytes on average and 750 at most: 1 MiB holds about
# 2,700 of them (270 dialogues' worth), full within SGD dev's first tenth, so it stops growing.
@byte_bounded(1 << 20, _cue_entry_size)
def system_cue(utterance: str) -> StatusCue | None:
    """The cue of a system utterance (results included), or None."""
    # The act as system_act reads it, from the utterance's n-grams taken once (the evidence
    # reads them too).
    model, grams = system_act_model(), text_features(utterance)
    return _system_cue_of(model, model.known(grams), model.probabilities_of(grams))


def _system_cue_of(
    model: SystemActModel, known: Sequence[tuple[str, int]], probabilities: NDArray[np.float32]
) -> StatusCue | None:
    """:func:`system_cue` given the utterance's known n-grams and the model's probabilities."""
    act, probability = model.best(probabilities)
    return _cue_for(model, known, act, probability)


def _cue_for(
    model: SystemActModel, known: Sequence[tuple[str, int]], act: SystemAct, probability: float
) -> StatusCue | None:
    """:func:`_system_cue_of` given the most probable act and its probability."""
    move = _SYSTEM_STATUS.get(act)
    if move is None or probability < MIN_ACT_PROBABILITY:
        return None
    evidence = model.evidence_of_known(known, act)
    return StatusCue(move[1], evidence, move[0], round(probability, 4))


def read_system_cues(utterances: Sequence[str]) -> None:
    """Read the cues of a dialogue's system utterances in one step, for :func:`system_cue`.

    The model's probabilities of every utterance not yet cached come from one
    :meth:`SystemActModel.probabilities_many` (the same numbers as one call each); each cue
    then waits in :func:`system_cue`'s cache, which answers the tracker's calls.
    """
    cache = system_cue.cache
    unread = [text for text in dict.fromkeys(utterances) if text not in cache]
    if not unread:
        return
    model = system_act_model()
    known = [model.known(text_features(text)) for text in unread]
    probabilities = model.probabilities_of_known(known)
    # Each row's best act as SystemActModel.best reads it (the first maximum; a float32 read
    # as a Python float either way), for every row at once.
    best = np.argmax(probabilities, axis=1)
    chosen = np.take_along_axis(probabilities, best[:, None], axis=1)[:, 0].tolist()
    labels = model.labels
    for text, its_known, row, probability in zip(unread, known, best.tolist(), chosen, strict=True):
        cache.put(text, (_cue_for(model, its_known, labels[row], probability),))


def user_cue(utterance: str) -> StatusCue | None:
    """The cue of a user utterance: explicit abandonment or deferral, or None."""
    checks: tuple[tuple[re.Pattern[str], GoalStatus, CueAct], ...] = (
        (USER_ABANDONS, "abandoned", "abandon"),
        (USER_DEFERS, "pending", "defer"),
    )
    for pattern, status, act in checks:
        found = pattern.search(utterance)
        if found:
            return StatusCue(status, found.group(0), act)
    return None


def status_cue(speaker: Speaker, utterance: str) -> StatusCue | None:
    """The lifecycle move an utterance signals for a goal, if any.

    Results presented by the system are not a move of their own here (they complete a lookup
    only: see :func:`system_cue`); a transaction's success, failure and confirmation are.
    """
    if speaker == "USER":
        return user_cue(utterance)
    found = system_cue(utterance)
    return None if found is None or found.for_lookups else found
