"""The learned local teachers: ``local:turn``, ``local:reply-reaction``, ``local:fit-reaction``.

Three logistic regressions with Platt calibration, one per evidence block (R reply, C fit, N
reaction; :mod:`~nodes.goal_success.judges.turn_quality.evidence`), trained on SGD train (CC
BY-SA 4.0) and failures the team made from real turns (``make train-turn-quality``). Each
teacher stacks two blocks (R + C, R + N, C + N), so every kind of evidence is read by two. On
the last turn the reaction teachers read their reply-side block alone, with its own band: a
missing reaction is never read as "success".

``p(failure)`` is stated at the model file's deployment ``prior``: at or above the ``fail``
cut-off the turn failed (a per-teacher multinomial model names the cause, E1-E7), below
``succ`` it succeeded, in between the teacher abstains. Both cut-offs were chosen on SGD dev.
Inference is numpy over ``turn_quality.npz`` and ``turn_quality.json``.

**Tool transcripts** (an agent with a tool channel, talking to a simulated user): the user's
next message follows the task's script (it supplies what the agent asked for, or moves on to
the next step or a new request) and is worded as no SGD user words a reaction; read as
evidence it made the reaction teachers call 87 % of GPT-4.1's turns on run40 failures,
"Yep, that's my number!" included. There the reaction teachers read the next message only when
the user's explicit signals say the turn failed (:func:`~nodes.goal_success.judges.
turn_quality.local_signals.complaints`: a give-up, negative feedback, a correction); after any
other next message they read their reply-side block alone, as on the last turn. Dialogues
without a tool channel (SGD, MultiWOZ, chat logs) are read as before.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from todeval.evals.schema import RCOF_CODES, Dialogue
from todeval.nodes.goal_success.judges.turn_quality import TeacherVerdict, TurnLabel
from todeval.nodes.goal_success.judges.turn_quality.evidence import (
    EvidenceBlocks,
    FloatArray,
    evidence_blocks,
    turn_views,
    view_texts,
)
from todeval.nodes.goal_success.judges.turn_quality.local_signals import complaints
from todeval.nodes.goal_success.judges.turn_quality.tool_evidence import has_tool_channel
from todeval.nodes.judges.vectors import Embed, VectorTable, minilm_table

MODEL_DIR = Path(__file__).parent
"""Where ``turn_quality.npz`` and ``turn_quality.json`` live."""

BLOCK_NAMES = {"R": "reply", "C": "fit", "N": "reaction"}


def _sigmoid(x: FloatArray) -> FloatArray:
    # np.clip(x, -30.0, 30.0) as its two ufuncs (the same values, NaN kept), without its wrapper.
    clipped = np.minimum(np.maximum(x, -30.0), 30.0)
    out: FloatArray = (1.0 / (1.0 + np.exp(-clipped))).astype(np.float32)
    return out


def _logit(p: float) -> float:
    return float(np.log(p / (1.0 - p)))


@dataclass(frozen=True)
class Band:
    """A teacher's cut-offs: failure at ``p >= fail``, success at ``p < succ``, else abstain."""

    succ: float
    fail: float


class TurnQualityModel:
    """The exported arrays (``.npz``) and metadata (``.json``) of ``make train-turn-quality``."""

    def __init__(self, arrays: Mapping[str, FloatArray], meta: Mapping[str, Any]) -> None:
        self.arrays = dict(arrays)
        self.meta = dict(meta)
        self.prior = float(meta["prior"])

    @classmethod
    def load(cls, directory: Path = MODEL_DIR) -> TurnQualityModel:
        """Read ``turn_quality.{npz,json}`` from ``directory`` (``make train-turn-quality``)."""
        npz, meta = directory / "turn_quality.npz", directory / "turn_quality.json"
        if not npz.exists() or not meta.exists():
            raise FileNotFoundError(
                f"No turn-quality model in {directory}; run `make train-turn-quality`."
            )
        with np.load(npz, allow_pickle=False) as files:
            arrays = {name: files[name].astype(np.float32) for name in files.files}
        return cls(arrays, json.loads(meta.read_text(encoding="utf-8")))

    def _a(self, name: str) -> FloatArray:
        return self.arrays[name]

    def _linear(self, prefix: str, x: FloatArray) -> FloatArray:
        """Standardise ``x`` as the model's scaler did, then apply its weights."""
        standard = (x - self._a(f"{prefix}_mean")) / self._a(f"{prefix}_scale")
        coef = self._a(f"{prefix}_coef")
        out = standard @ coef.T + self._a(f"{prefix}_intercept")
        return out.astype(np.float32, copy=False)

    def teacher(self, key: str) -> Mapping[str, Any]:
        """A teacher's metadata: ``blocks``, ``band``, ``alone_band``, ``code_classes``."""
        found: Mapping[str, Any] = self.meta["teachers"][key]
        return found

    def band(self, key: str, *, alone: bool = False) -> Band:
        """The teacher's cut-offs (``alone``: the band of its reply-side block alone)."""
        cuts = self.teacher(key)["alone_band" if alone else "band"]
        return Band(succ=float(cuts["succ"]), fail=float(cuts["fail"]))

    def block_logits(self, blocks: EvidenceBlocks, names: Sequence[str]) -> dict[str, FloatArray]:
        """Calibrated log-odds of failure per evidence model (at its training mix)."""
        out = {}
        for name in names:
            z = self._linear(f"base_{name}", blocks.block(name))
            a, b = self._a(f"base_{name}_platt")
            out[name] = -(a * z + b)  # scikit-learn's sigmoid calibration: 1 / (1 + exp(a z + b))
        return out

    def block_probability(self, name: str, logit: FloatArray) -> FloatArray:
        """An evidence model's p(failure) restated at the deployment prior."""
        rate = float(self.meta["base_rates"][name])
        return _sigmoid(logit + _logit(self.prior) - _logit(rate))

    def probability(
        self, key: str, logits: Mapping[str, FloatArray], has_next: np.ndarray[Any, Any]
    ) -> tuple[FloatArray, np.ndarray[Any, Any]]:
        """The teacher's p(failure) per turn, and where it read its reply-side block alone."""
        first, second = self.teacher(key)["blocks"]
        w, c = self._a(f"stack_{key}_coef"), self._a(f"stack_{key}_intercept")[0]
        z = w[0] * logits[first] + w[1] * logits[second] + c
        if "N" not in (first, second):
            return _sigmoid(z), np.zeros(len(z), dtype=bool)
        return _sigmoid(np.where(has_next, z, self.alone_logit(key, logits))), ~has_next

    def alone_logit(self, key: str, logits: Mapping[str, FloatArray]) -> FloatArray:
        """A reaction teacher's log-odds from its reply-side block alone."""
        side = next(b for b in self.teacher(key)["blocks"] if b != "N")
        w1, c1 = self._a(f"alone_{key}_coef")[0], self._a(f"alone_{key}_intercept")[0]
        out: FloatArray = w1 * logits[side] + c1
        return out

    def codes(self, key: str, blocks: EvidenceBlocks) -> list[str]:
        """The most likely root cause per turn (read only where the teacher says failure)."""
        names = self.teacher(key)["blocks"]
        x = np.hstack(
            [blocks.block(b) for b in names] + [blocks.has_next[:, None].astype(np.float32)]
        )
        scores = self._linear(f"ecode_{key}", x)
        classes: list[str] = list(self.teacher(key)["code_classes"])
        return [classes[i] for i in np.argmax(scores, axis=1)]


def default_vectors() -> VectorTable:
    """The MiniLM vector table the learned teachers share (one per process, with the segmenter)."""
    return minilm_table()


@functools.cache
def shipped_model() -> TurnQualityModel:
    """The model files next to this module, read once per process."""
    return TurnQualityModel.load()


class LearnedTeacher:
    """A learned teacher over two evidence blocks (see the module doc); subclasses pick them."""

    name: str  # the Protocol's attribute, set per subclass
    key: ClassVar[str]

    def __init__(self, model: TurnQualityModel | None = None, embed: Embed | None = None) -> None:
        self.model = model or shipped_model()
        # The panel's teachers read the same texts: with MiniLM they share one table.
        self.vectors = VectorTable(embed) if embed is not None else default_vectors()
        self.blocks: tuple[str, ...] = tuple(self.model.teacher(self.key)["blocks"])

    def prepare(self, dialogues: Sequence[Dialogue]) -> None:
        """Embed the chunk's messages and replies in one batch."""
        self.vectors.load(text for d in dialogues for text in view_texts(turn_views(d)))

    def label(
        self, dialogue: Dialogue, *, routes: Mapping[str, str] | None = None
    ) -> TeacherVerdict:
        """One label per turn, in order (``routes`` is not read)."""
        blocks = shared_evidence(dialogue, self.vectors)
        quiet = np.zeros(len(dialogue.turns), dtype=bool)
        if "N" in self.blocks and has_tool_channel(dialogue):
            quiet = blocks.has_next & ~np.array(complaints(dialogue), dtype=bool)
            blocks = dataclasses.replace(
                blocks,
                N=np.where(quiet[:, None], np.float32(0.0), blocks.N).astype(np.float32),
                has_next=blocks.has_next & ~quiet,
            )
        logits, by_block = shared_block_reads(self.model, blocks, self.blocks)
        p, alone = self.model.probability(self.key, logits, blocks.has_next)
        columns = [by_block[b].tolist() for b in self.blocks]
        read = list(zip(*columns, strict=True))  # per turn, each block's p(failure)
        # The blocks a rationale names, with alone and without (the reply side alone: no N).
        shown = {
            flag: [
                (BLOCK_NAMES[b], i) for i, b in enumerate(self.blocks) if not (flag and b == "N")
            ]
            for flag in (False, True)
        }
        side = shown[True][0][0]  # the block a reaction teacher reads alone
        # The floats and bools float() and bool() give of each item.
        p_of, alone_flags, quiet_flags = p.tolist(), alone.tolist(), quiet.tolist()
        bands = {flag: self.model.band(self.key, alone=flag) for flag in {False, *alone_flags}}
        failed = any(p_i >= bands[flag].fail for p_i, flag in zip(p_of, alone_flags, strict=True))
        # A cause is read only on a failed turn: without one the cause model is not run
        # (about two dialogues in three of SGD dev, per teacher).
        codes = self.model.codes(self.key, blocks) if failed else [""] * len(p_of)
        labels = [
            self._label_turn(
                turn.turn_number,
                p_of[i],
                alone_flags[i],
                codes[i],
                [f"{name} {read[i][column]:.3f}" for name, column in shown[alone_flags[i]]],
                bands,
                quiet=quiet_flags[i],
                side=side,
            )
            for i, turn in enumerate(dialogue.turns)
        ]
        return TeacherVerdict(judge=self.name, turns=labels)

    def _label_turn(
        self,
        k: int,
        p: float,
        alone: bool,
        code: str,
        parts: Sequence[str],
        bands: Mapping[bool, Band],
        *,
        quiet: bool = False,
        side: str = "",
    ) -> TurnLabel:
        """``parts``: "<block> <its p(failure)>" of each block shown; alone, ``side``'s only."""
        band = bands[alone]
        evidence = f"p(failure)={p:.3f} ({', '.join(parts)})"
        if alone:
            why_alone = (
                "no complaint in the next message (tool transcript)"
                if quiet
                else ("no reaction (last turn)")
            )
            evidence = f"{why_alone}, {side} alone: {evidence}"
        if p >= band.fail:
            why = f"{evidence} >= {band.fail:.3f}: failure, most likely {code} ({RCOF_CODES[code]})"
            return TurnLabel(k, "failure", code, why)
        if p < band.succ:
            return TurnLabel(k, "success", None, f"{evidence} < {band.succ:.3f}: success")
        why = f"{evidence} is in the uncertain band [{band.succ:.3f}, {band.fail:.3f}): no label"
        return TurnLabel(k, None, None, why)


#: The last dialogue's evidence blocks, by (embedding function, its turns' texts): the panel's
#: learned teachers label one dialogue after another and read the same blocks.
_last_evidence: tuple[tuple[Any, ...], EvidenceBlocks] | None = None


def shared_evidence(dialogue: Dialogue, vectors: VectorTable) -> EvidenceBlocks:
    """The R, C and N blocks of ``dialogue``, computed once for all the teachers that ask."""
    global _last_evidence
    key = (vectors.source, *((t.user_msg, t.response) for t in dialogue.turns))
    last = _last_evidence  # one read: another thread may swap it, never mutate it
    if last is not None and last[0] == key:
        return last[1]
    blocks = evidence_blocks(turn_views(dialogue), vectors.get)
    _last_evidence = (key, blocks)
    return blocks


#: The last blocks' calibrated log-odds and p(failure) per evidence model: each block is read
#: by two of the panel's three teachers (one tuple, swapped whole, never mutated).
_last_reads: (
    tuple[TurnQualityModel, EvidenceBlocks, dict[str, tuple[FloatArray, FloatArray]]] | None
) = None


def shared_block_reads(
    model: TurnQualityModel, blocks: EvidenceBlocks, names: Sequence[str]
) -> tuple[dict[str, FloatArray], dict[str, FloatArray]]:
    """``model.block_logits`` of ``names`` and each one's ``block_probability``.

    Worked out once per block for the teachers that read the same ``blocks`` (the object
    :func:`shared_evidence` hands them) one after the other.
    """
    global _last_reads
    last = _last_reads
    known = last[2] if last is not None and last[0] is model and last[1] is blocks else {}
    missing = [name for name in names if name not in known]
    if missing:
        fresh = model.block_logits(blocks, missing)
        known = known | {
            name: (fresh[name], model.block_probability(name, fresh[name])) for name in missing
        }
        _last_reads = (model, blocks, known)
    return {name: known[name][0] for name in names}, {name: known[name][1] for name in names}


class TurnTeacher(LearnedTeacher):
    """``local:turn``: the reply and its fit to the request (R + C)."""

    name = "local:turn"
    key = "turn"


class ReplyReactionTeacher(LearnedTeacher):
    """``local:reply-reaction``: the reply and the user's next message (R + N)."""

    name = "local:reply-reaction"
    key = "reply-reaction"


class FitReactionTeacher(LearnedTeacher):
    """``local:fit-reaction``: the fit to the request and the user's next message (C + N)."""

    name = "local:fit-reaction"
    key = "fit-reaction"
