"""The segmentation role's judges: ``is_new_goal`` for every turn (paper 004, Section 4.1).

Input: a :class:`~evals.schema.Dialogue`. Output: :class:`SegmentationVerdict`, one label per
turn (turn 1 always starts a goal), None where a judge could not tell. Three judges share
:class:`SegmentationJudge`:

* ``local`` / ``local:learned`` (:class:`LearnedSegmenter`) - boosted trees over features
  relative to the current goal (:mod:`.goal_features`, :mod:`.features`, :mod:`.discourse`),
  trained on SGD train by ``make train-segmenter``; the model files are beside this module.
* ``local:rules`` (:class:`RuleSegmenter`) - the same cues and embedding similarities combined
  by hand, no training: a transparent baseline and a fallback for domains far from SGD.
* ``<provider>:<model>`` (:class:`LLMSegmenter`) - the paper's Appendix D call
  (:mod:`nodes.goal_success.judges.appendix_d`); given the domain's business rules
  (``Context.teacher_sop``) it sends them as the LLM teachers do, so a teacher with the same
  spec reads its answer from the response cache and segmentation adds no call.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from todeval.evals.schema import Dialogue
from todeval.nodes.goal_success.judges.appendix_d import AppendixDRoleJudge
from todeval.nodes.goal_success.judges.response_cues import PREVIOUS_REPLY_CUES
from todeval.nodes.goal_success.judges.segmentation.discourse import DiscourseCueModel
from todeval.nodes.goal_success.judges.segmentation.features import (
    ActPrototypes,
    minutes_since_previous,
    turn_texts,
)
from todeval.nodes.goal_success.judges.segmentation.goal_features import (
    FEATURE_NAMES,
    DialogueView,
    turn_row,
)
from todeval.nodes.goal_success.judges.user_cues import USER_CUES
from todeval.nodes.judges.trees import BoostedTrees
from todeval.nodes.judges.vectors import Embed, VectorTable, minilm_table
from todeval.stores.embeddings import get_embedder


@dataclass(frozen=True)
class SegmentationVerdict:
    """A judge's labels for one dialogue; turn 1 is always a new goal."""

    is_new_goal: list[bool | None]
    judge: str
    probabilities: list[float | None] | None = None
    reason: str | None = None


class SegmentationJudge(Protocol):
    """Anything that labels every turn of a dialogue with ``is_new_goal``."""

    name: str

    def prepare(self, dialogues: Sequence[Dialogue]) -> None:
        """Batch work for dialogues about to be segmented (may do nothing)."""
        ...

    def segment(
        self, dialogue: Dialogue, *, time_gap_minutes: float, threshold: float | None
    ) -> SegmentationVerdict:
        """Label each turn of ``dialogue``."""
        ...


class LLMSegmenter(AppendixDRoleJudge):
    """An LLM reads the whole dialogue and labels every turn (Appendix D prompt)."""

    def segment(
        self, dialogue: Dialogue, *, time_gap_minutes: float, threshold: float | None
    ) -> SegmentationVerdict:
        """One call per dialogue (or window); turns the model leaves out stay ``None``."""
        verdict = self.call.judge(dialogue)
        labels: list[bool | None] = [True]
        labels += [turn.is_new_goal if turn else None for turn in verdict.turns[1:]]
        return SegmentationVerdict(labels, self.name, reason=verdict.reason)


#: The boosted trees (``.npz``, with a ``.json`` sidecar: threshold, provenance, figures).
MODEL_PATH = Path(__file__).parent / "segmentation_trees.npz"
#: The discourse-cue model whose score is one of the trees' features.
CUES_PATH = Path(__file__).parent / "segmentation_cues.npz"
#: The local segmenters' validity cards (``make validity``).
CARDS = Path(__file__).parent / "validity.json"

#: Log-odds added for a pause longer than ``time_gap_minutes`` (a signal, not a rule).
TIME_GAP_LOGIT = 2.0


def embed_dialogue_texts(
    dialogues: Sequence[Dialogue], embed: Embed | None = None, *, replies: bool = True
) -> None:
    """Embed the messages of ``dialogues`` in one batch, so later calls hit the cache.

    ``embed`` is the segmenter's embedding function (default: MiniLM).
    """
    texts = [
        text
        for dialogue in dialogues
        for turn in dialogue.turns
        for text in ((turn.user_msg, turn.response) if replies else (turn.user_msg,))
    ]
    if texts:
        (embed or get_embedder().embed)(texts)


def long_pauses(dialogue: Dialogue, time_gap_minutes: float) -> list[bool]:
    """For turns 2..N: did more than ``time_gap_minutes`` pass since the previous turn?"""
    gaps = minutes_since_previous(dialogue)[1:]
    return [gap is not None and gap > time_gap_minutes for gap in gaps]


class LearnedSegmenter:
    """``local:learned``: boosted trees over features relative to the current goal.

    Features (:mod:`.goal_features`): topic shift against the goal's accumulated text, value
    spans (the entity just offered, the goal's, a new one), dialogue acts of the message and of
    the replies around it, and a learned discourse-cue score. Turns are decoded left to right:
    a turn called new starts the goal the next turns are compared with. A long pause raises the
    odds. Trained on SGD train and the project's human-style dialogues (``make
    train-segmenter``).
    """

    name = "local:learned"

    def __init__(
        self,
        model: BoostedTrees | None = None,
        cues: DiscourseCueModel | None = None,
        embed: Embed | None = None,
    ) -> None:
        """Use ``model`` and ``cues`` (default: the shipped ones) and ``embed`` (MiniLM)."""
        if model is None or cues is None:
            if not MODEL_PATH.exists() or not CUES_PATH.exists():
                raise FileNotFoundError(
                    f"No segmentation model at {MODEL_PATH}; run `make train-segmenter`."
                )
        self.model = model or BoostedTrees.load(MODEL_PATH)
        if self.model.feature_names and self.model.feature_names != FEATURE_NAMES:
            raise ValueError(f"{MODEL_PATH.name} was trained on other features; retrain it")
        self.cues = cues or DiscourseCueModel.load(CUES_PATH)
        # MiniLM's vectors come from the table the learned teachers share: the chunk's
        # messages are embedded once for all of them, then read without hashing each text.
        self.vectors = VectorTable(embed) if embed is not None else minilm_table()
        self.embed: Embed = self.vectors.get
        self.prototypes = ActPrototypes.embed_with(self.embed)

    def prepare(self, dialogues: Sequence[Dialogue]) -> None:
        """Embed the chunk's messages in one batch (into the shared table)."""
        self.vectors.load(
            text for dialogue in dialogues for turn in dialogue.turns
            for text in (turn.user_msg, turn.response)
        )  # fmt: skip

    def segment(
        self, dialogue: Dialogue, *, time_gap_minutes: float, threshold: float | None
    ) -> SegmentationVerdict:
        """Probability of a new goal per turn, shifted by time gaps, cut at the threshold."""
        if len(dialogue.turns) == 1:
            return SegmentationVerdict([True], self.name, [1.0])
        view = DialogueView.build(dialogue, self.embed, self.prototypes, self.cues)
        paused = long_pauses(dialogue, time_gap_minutes)
        cut = self.model.threshold_probability if threshold is None else threshold
        probabilities = decode_greedy(self.model, view, paused, cut)
        labels: list[bool | None] = [True, *(p >= cut for p in probabilities)]
        confidences: list[float | None] = [1.0, *(round(p, 4) for p in probabilities)]
        return SegmentationVerdict(labels, self.name, confidences)


def decode_greedy(
    model: BoostedTrees, view: DialogueView, paused: Sequence[bool], cut: float
) -> list[float]:
    """New-goal probabilities of turns 2..N, left to right.

    Each turn is compared with the goal that the turns before it were decoded into: a turn
    whose probability reaches ``cut`` starts the goal the next turns are compared with.
    """
    probabilities: list[float] = []
    start = 0
    for j in range(1, len(view.users)):
        logit = model.logit(turn_row(view, j, start))
        probability = 1.0 / (1.0 + math.exp(-(logit + TIME_GAP_LOGIT * paused[j - 1])))
        probabilities.append(probability)
        if probability >= cut:
            start = j
    return probabilities


class RuleSegmenter:
    """``local:rules``: hand-weighted cues and topic shift, no training data needed.

    A turn starts a new goal when the user signals it ("another question", a new request after
    "anything else?"), or when the topic moves away from the previous user message while the
    message does not read as an answer, a follow-up or a reference back ("it", "that").
    Written for question-answering assistants; weak on transactional dialogues such as SGD,
    where follow-up questions about an offered item are common (SGD dev F1 0.20).
    """

    name = "local:rules"
    topic_shift_below = 0.35

    def prepare(self, dialogues: Sequence[Dialogue]) -> None:
        """Embed the chunk's user messages (the only texts the rules compare) in one batch."""
        embed_dialogue_texts(dialogues, replies=False)

    def segment(
        self, dialogue: Dialogue, *, time_gap_minutes: float, threshold: float | None
    ) -> SegmentationVerdict:
        """Score each turn from cues; ``threshold`` is unused (the rules are binary)."""
        users, replies = turn_texts(dialogue)
        vectors = get_embedder().embed(users) if len(users) > 1 else None
        paused = long_pauses(dialogue, time_gap_minutes)
        labels: list[bool | None] = [True]
        for j in range(1, len(users)):
            assert vectors is not None
            labels.append(self._is_new_goal(users, replies, vectors, j, paused[j - 1]))
        return SegmentationVerdict(labels, self.name)

    def _is_new_goal(
        self,
        users: Sequence[str],
        replies: Sequence[str],
        vectors: np.ndarray,
        j: int,
        long_pause: bool,
    ) -> bool:
        def user(cue: str) -> bool:
            return bool(USER_CUES[cue].search(users[j]))

        def reply(cue: str) -> bool:
            return bool(PREVIOUS_REPLY_CUES[cue].search(replies[j - 1]))

        if user("negative_feedback") or user("answer_like") or user("follow_up"):
            return False
        if user("explicit_switch") or user("greeting"):
            return True
        if reply("offers_more_help") and user("request"):
            return True
        shifted = float(vectors[j] @ vectors[j - 1]) < self.topic_shift_below
        if reply("asks_question") and not user("request"):
            return False  # most likely answering the assistant's question
        return bool((shifted and not user("anaphora")) or (long_pause and user("request")))
