"""Which sub-targets a message carries: MiniLM similarity per sentence, with word overlap.

A sub-target ("Ask about her latest finds at Groove Cellar") is carried by a message when some
sentence of it (or the whole message) is close to the sub-target in MiniLM space
(cosine >= ``cosine``), or is fairly close (>= ``cosine_with_words``) and shares at least
``words`` of the sub-target's content words. The three cut points are fit by
``scripts/proactive_calibration.py`` on half of the team-labelled dialogues (their
``sub_targets_covered``) and stored in ``calibration.json`` beside this module.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from todeval.nodes.judges.text import sentences
from todeval.nodes.judges.vectors import FloatArray
from todeval.nodes.proactive.judges.calibration import read_calibration
from todeval.nodes.proactive.text import content_stems

CALIBRATION_PATH = Path(__file__).with_name("calibration.json")


@dataclass(frozen=True)
class CoverageCuts:
    """The cut points of :meth:`Similarities.covered` (see the module docstring)."""

    cosine: float = 0.55
    cosine_with_words: float = 0.35
    words: float = 0.5


def calibrated_cuts() -> CoverageCuts:
    """The cut points fit on the team's labels (defaults when none were fit yet)."""
    raw = read_calibration(CALIBRATION_PATH)
    return CoverageCuts(**raw["cuts"]) if raw is not None else CoverageCuts()


def message_parts(message: str) -> list[str]:
    """The message and its sentences (list lines count as sentences)."""
    parts = [message.strip()]
    for line in re.split(r"\n+", message):
        parts.extend(sentences(line))
    return list(dict.fromkeys(p for p in parts if p))


@dataclass(frozen=True)
class Similarities:
    """Per (message, sub-target): best sentence cosine and share of content words present."""

    cosine: NDArray[np.float32]
    words: NDArray[np.float32]

    def covered(self, cuts: CoverageCuts) -> NDArray[np.bool_]:
        """Which sub-targets each message carries under ``cuts``."""
        close = self.cosine >= cuts.cosine
        near = (self.cosine >= cuts.cosine_with_words) & (self.words >= cuts.words)
        covered: NDArray[np.bool_] = close | near
        return covered


def similarities(
    sub_targets: Sequence[str], messages: Sequence[str], embed: Callable[[list[str]], FloatArray]
) -> Similarities:
    """Cosine and word overlap of every (message, sub-target) pair, in one embedding batch."""
    parts = [message_parts(m) for m in messages]
    flat = [p for group in parts for p in group]
    vectors = embed([*sub_targets, *flat])
    targets, rows = vectors[: len(sub_targets)], vectors[len(sub_targets) :]
    cosine = np.zeros((len(messages), len(sub_targets)), np.float32)
    lexical = np.zeros_like(cosine)
    start = 0
    wanted = [content_stems(s) for s in sub_targets]
    for i, group in enumerate(parts):
        block = rows[start : start + len(group)]
        start += len(group)
        if len(group):
            cosine[i] = (block @ targets.T).max(axis=0)
        said = content_stems(messages[i])
        for j, needed in enumerate(wanted):
            lexical[i, j] = len(needed & said) / len(needed) if needed else 0.0
    return Similarities(cosine=cosine, words=lexical)
