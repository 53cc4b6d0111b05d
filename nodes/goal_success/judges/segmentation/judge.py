"""The goal-segmentation judge role: ``is_new_goal`` for every turn (paper 004, Section 4.1).

Three judges share one interface, :class:`SegmentationJudge`:

* ``local`` / ``local:learned`` - a small classifier on MiniLM features and cue flags
  (:mod:`nodes.goal_success.judges.segmentation.features`), trained on SGD train by ``make train-segmenter``.
* ``local:rules`` - the same cues and embedding similarities combined by hand, no training:
  a transparent baseline and a fallback for domains far from SGD.
* ``<provider>:<model>`` - the paper's Appendix D prompt through :class:`LLMJudge`.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
from pydantic import BaseModel, Field, field_validator

from evals.schema import Dialogue, yes_no_to_bool
from nodes.goal_success.judges.segmentation.features import (
    EXPLICIT_SWITCH,
    PREVIOUS_REPLY_CUES,
    USER_CUES,
    ActPrototypes,
    Embed,
    minutes_since_previous,
    segmentation_features,
    turn_texts,
)
from nodes.judges import resolve_judge
from nodes.judges.classifier import MLPClassifier
from nodes.judges.llm import LLMJudge
from nodes.judges.local import register_local_judge
from nodes.judges.spec import JudgeSpec
from nodes.prompts.goal_success import (
    SEGMENTATION_PROMPT,
    SEGMENTATION_SYSTEM_PROMPT,
    TURN_TEMPLATE,
)
from stores.embeddings import get_embedder

ROLE = "segmentation"
MODEL_PATH = Path(__file__).parent / "segmentation_mlp.npz"
#: Log-odds added for a pause longer than ``time_gap_minutes`` (a signal, not a rule).
TIME_GAP_LOGIT = 2.0


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
    """``local:learned``: a small MLP over similarities, cue flags and dialogue-act scores.

    Trained on SGD train (``make train-segmenter``); an explicit topic-switch phrase ("another
    question", "unrelated", "btw") starts a goal whatever the model says, as paper 004 names
    such contextual cues, and a long pause raises the odds.
    """

    name = "local:learned"

    def __init__(self, model: MLPClassifier | None = None, embed: Embed | None = None) -> None:
        """Use ``model`` (default: the shipped one) and ``embed`` (default: MiniLM)."""
        if model is None:
            if not MODEL_PATH.exists():
                raise FileNotFoundError(
                    f"No segmentation model at {MODEL_PATH}; run `make train-segmenter`."
                )
            model = MLPClassifier.load(MODEL_PATH)
        self.model = model
        self.embed = embed or get_embedder().embed
        self.prototypes = ActPrototypes.embed_with(self.embed)

    def prepare(self, dialogues: Sequence[Dialogue]) -> None:
        """Embed the chunk's messages in one batch."""
        embed_dialogue_texts(dialogues, self.embed)

    def segment(
        self, dialogue: Dialogue, *, time_gap_minutes: float, threshold: float | None
    ) -> SegmentationVerdict:
        """Probability of a new goal per turn, shifted by time gaps, cut at the threshold."""
        if len(dialogue.turns) == 1:
            return SegmentationVerdict([True], self.name, [1.0])
        features = segmentation_features(dialogue, self.embed, self.prototypes)
        paused = np.array(long_pauses(dialogue, time_gap_minutes), dtype=np.float32)
        logits = self.model.logits(features) + TIME_GAP_LOGIT * paused
        probabilities = 1.0 / (1.0 + np.exp(-logits))
        cut = self.model.threshold if threshold is None else threshold
        announced = [bool(EXPLICIT_SWITCH.search(t.user_msg)) for t in dialogue.turns[1:]]
        labels: list[bool | None] = [
            True,
            *(bool(p >= cut) or said for p, said in zip(probabilities, announced, strict=True)),
        ]
        confidences: list[float | None] = [1.0, *(round(float(p), 4) for p in probabilities)]
        return SegmentationVerdict(labels, self.name, confidences)


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


class LLMSegmentTurn(BaseModel):
    """One turn of the Appendix D output."""

    turn_number: int = Field(description="The turn's number, starting at 1.")
    is_new_goal: bool = Field(description="yes if this turn starts a new goal, else no.")

    @field_validator("is_new_goal", mode="before")
    @classmethod
    def _yes_no(cls, value: object) -> object:
        return yes_no_to_bool(value)


class LLMSegmentation(BaseModel):
    """The Appendix D JSON, segmentation fields only."""

    dialog_id: str | int | None = Field(default=None, description="The dialogue's id.")
    turns: list[LLMSegmentTurn] = Field(description="One entry per turn.")


class LLMSegmenter:
    """An LLM reads the whole dialogue and labels every turn (Appendix D prompt)."""

    def __init__(self, spec: JudgeSpec, *, max_retries: int = 3) -> None:
        self.name = spec.raw
        self.llm = LLMJudge(
            role=ROLE,
            spec=spec,
            prompt=SEGMENTATION_PROMPT,
            system=SEGMENTATION_SYSTEM_PROMPT,
            output_model=LLMSegmentation,
            max_retries=max_retries,
        )

    def prepare(self, dialogues: Sequence[Dialogue]) -> None:
        """Nothing to batch: one call per dialogue."""

    def segment(
        self, dialogue: Dialogue, *, time_gap_minutes: float, threshold: float | None
    ) -> SegmentationVerdict:
        """One call per dialogue; turns the model leaves out stay ``None``."""
        result = self.llm.invoke(
            {"dialog_id": dialogue.dialogue_id, "question": render_dialogue(dialogue)}
        )
        n = len(dialogue.turns)
        if result.value is None:
            return SegmentationVerdict([True] + [None] * (n - 1), self.name, reason=result.reason)
        by_number = {turn.turn_number: turn.is_new_goal for turn in result.value.turns}
        labels: list[bool | None] = [True, *(by_number.get(k) for k in range(2, n + 1))]
        missing = [k for k in range(2, n + 1) if k not in by_number]
        reason = f"the judge gave no label for turns {missing}" if missing else None
        return SegmentationVerdict(labels, self.name, reason=reason)


def render_dialogue(dialogue: Dialogue) -> str:
    """The dialogue as the judge reads it, one block per turn."""
    return "\n\n".join(
        TURN_TEMPLATE.format(
            turn_number=turn.turn_number, user_msg=turn.user_msg, response=turn.response
        )
        for turn in dialogue.turns
    )


@register_local_judge(ROLE, "learned", default=True)
def _learned() -> LearnedSegmenter:
    return LearnedSegmenter()


@register_local_judge(ROLE, "rules")
def _rules() -> RuleSegmenter:
    return RuleSegmenter()


@functools.lru_cache(maxsize=16)
def segmentation_judge(spec: str, max_retries: int = 3) -> SegmentationJudge:
    """The judge for ``spec`` (built once per spec; raises on unknown specs)."""
    judge: SegmentationJudge = resolve_judge(
        ROLE, spec, lambda parsed: LLMSegmenter(parsed, max_retries=max_retries)
    )
    return judge
