"""A learned discourse-cue model: how a message's *function words* say "new need" or "same one".

Instead of a hand-written list of cue phrases, the user's message is reduced to its closed-class
words (pronouns, connectives, auxiliaries, discourse adverbs, acknowledgements, request verbs)
with every other word replaced by its shape (``<w>``, ``<name>``, ``<num>``), and a logistic
regression over hashed n-grams of that skeleton is trained on the same data as the segmenter
(``scripts/train_segmenter.py``). Content words never reach the model, so it cannot learn a
dataset's services or domains: "thanks . i also need a <w>" reads the same for a taxi in
Cambridge as for a laptop at work.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from todeval.nodes.judges.vectors import FloatArray

#: Hash buckets of the n-gram features.
N_BUCKETS = 1 << 15

#: The closed-class and discourse vocabulary kept verbatim; every other word becomes a shape.
FUNCTION_WORDS = frozenset(
    """a an the this that these those there here it its they them their theirs i me my mine
    we us our you your he she him her his one ones some any another other others else each
    every all both either neither such same different new next last first second previous
    and or but so then now also too as well either instead anyway actually just still already
    yet again even only really though although however besides plus meanwhile btw by way
    while since because if when whenever where which what whats what's who whom whose why how
    is are was were be been being am do does did done have has had having will would shall
    should can could may might must need needs needed want wants wanted like love prefer
    looking look find get give tell show help book reserve buy order cancel change make
    let lets let's know check see try go going take add set send pay schedule call
    i'm i'd i'll i've you're that's it's there's don't doesn't didn't can't won't isn't
    to of in on at for with from about into onto over under near around after before
    between up down out off back by
    yes yeah yep yup no nope not sure ok okay alright fine great good perfect lovely cool
    awesome excellent nice brilliant wonderful cheers thanks thank thx ty please pls
    sorry hi hello hey bye goodbye welcome
    more much many few less most very quite rather too enough else something anything
    nothing everything someone anyone question questions thing things topic issue request
    unrelated separate different matter note""".split()
)

_TOKEN = re.compile(r"[A-Za-z][A-Za-z']*|\d[\d:.,]*|[?!.,]")


def skeleton(text: str) -> list[str]:
    """The message as function words and shapes (see the module notes)."""
    tokens: list[str] = []
    for position, match in enumerate(_TOKEN.finditer(text)):
        token = match.group(0)
        lowered = token.lower()
        if lowered in FUNCTION_WORDS or token in "?!.,":
            tokens.append(lowered)
        elif token[0].isdigit():
            tokens.append("<num>")
        elif token[0].isupper() and position > 0 and tokens[-1] not in ".?!":
            tokens.append("<name>")
        else:
            tokens.append("<w>")
    return tokens


def cue_ngrams(user_msg: str) -> list[str]:
    """The n-grams the model reads: unigrams, and bi- and trigrams of the first 12 tokens."""
    words = skeleton(user_msg)
    padded = ["<s>", *words[:12], "</s>" if len(words) <= 12 else "<more>"]
    grams = [f"u1:{w}" for w in set(words)]
    grams += [f"u2:{a} {b}" for a, b in zip(padded, padded[1:], strict=False)]
    grams += [f"u3:{a} {b} {c}" for a, b, c in zip(padded, padded[1:], padded[2:], strict=False)]
    grams.append(f"len:{min(len(words), 20) // 4}")
    return grams


def hashed(grams: Sequence[str]) -> list[int]:
    """The distinct bucket of each n-gram (CRC32, stable across runs and machines)."""
    return sorted({_bucket(gram) for gram in grams})


def _bucket(gram: str) -> int:
    return zlib.crc32(gram.encode()) % N_BUCKETS


def cue_buckets(user_msg: str) -> list[int]:
    """``hashed(cue_ngrams(user_msg))``: the buckets, without spelling out every n-gram.

    An n-gram of skeleton tokens is looked up by its tokens (the tuples the zips make anyway):
    only one the memo does not know is spelt out and hashed. Segmenting reads this for every
    user message, training too; :func:`cue_ngrams` spells them out.
    """
    words = skeleton(user_msg)
    padded = ["<s>", *words[:12], "</s>" if len(words) <= 12 else "<more>"]
    grams = [
        *zip(words, strict=False),
        *zip(padded, padded[1:], strict=False),
        *zip(padded, padded[1:], padded[2:], strict=False),
    ]
    try:
        buckets = set(map(_GRAM_BUCKETS.__getitem__, grams))
    except KeyError:
        buckets = {_gram_bucket(gram) for gram in grams}
    buckets.add(_LENGTH_BUCKETS[min(len(words), 20) // 4])
    return sorted(buckets)


# The skeleton n-grams' buckets by their tokens: a memo of the common ones (function words and
# shapes: about nine in ten n-grams repeat), emptied when it reaches _GRAM_MEMO_SIZE (a few
# megabytes at most). A plain dict read with map is about four times cheaper a lookup than
# a functools.lru_cache call.
_GRAM_BUCKETS: dict[tuple[str, ...], int] = {}
_GRAM_MEMO_SIZE = 1 << 14
_ORDER = {1: "u1", 2: "u2", 3: "u3"}


def _gram_bucket(gram: tuple[str, ...]) -> int:
    """The bucket of an n-gram given by its tokens (``u1:a``, ``u2:a b``, ``u3:a b c``)."""
    bucket = _GRAM_BUCKETS.get(gram)
    if bucket is None:
        if len(_GRAM_BUCKETS) >= _GRAM_MEMO_SIZE:
            _GRAM_BUCKETS.clear()
        bucket = _GRAM_BUCKETS[gram] = _bucket(f"{_ORDER[len(gram)]}:{' '.join(gram)}")
    return bucket


#: The bucket of each length feature (``len:0`` .. ``len:5``).
_LENGTH_BUCKETS = [_bucket(f"len:{k}") for k in range(6)]


@dataclass(frozen=True)
class DiscourseCueModel:
    """Logistic regression over hashed cue n-grams: ``logit = bias + sum(weights[active])``."""

    weights: FloatArray
    bias: float

    def logit(self, user_msg: str) -> float:
        """The log-odds that ``user_msg`` opens a new goal, from its own cues alone."""
        # take() gathers what fancy indexing does; add.reduce is sum() without its wrapper.
        return self.bias + float(np.add.reduce(self.weights.take(cue_buckets(user_msg))))

    def save(self, path: Path) -> None:
        """Write the weights (float16) and bias to ``path`` (.npz)."""
        np.savez_compressed(
            path, weights=self.weights.astype(np.float16), bias=np.float32(self.bias)
        )

    @classmethod
    def load(cls, path: Path) -> DiscourseCueModel:
        """Read a model written by :meth:`save`."""
        with np.load(path) as arrays:
            return cls(arrays["weights"].astype(np.float32), float(arrays["bias"]))
