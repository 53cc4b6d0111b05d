"""Turn features relative to the *current goal*, for the ``local:learned`` segmenter.

Turn j (0-based, j >= 1) is compared with the goal it would continue: the turns from that
goal's first turn ``start`` to j-1 (decoded greedily; training uses the gold starts). Every
feature is relational, act-like or a shape, never a raw embedding or a content word, so nothing
ties the model to SGD's services: MiniLM topic shift against the previous turns and the goal's
text, lexical novelty, value spans by shape (:mod:`.features`), dialogue acts of the message
and the replies around it, the discourse-cue score (:mod:`.discourse`), and shape (lengths,
question marks, the goal's run, the conversation's style so far).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from todeval.evals.schema import Dialogue
from todeval.nodes.goal_success.judges.segmentation.discourse import DiscourseCueModel
from todeval.nodes.goal_success.judges.segmentation.features import (
    REPLY_ACT_PROTOTYPES,
    USER_ACT_PROTOTYPES,
    ActPrototypes,
    Spans,
    find_spans,
    mentions,
    merge,
    turn_texts,
)
from todeval.nodes.goal_success.judges.user_cues import content_words
from todeval.nodes.judges.vectors import Embed, FloatArray

_TOPIC = (
    "cos_prev_user",
    "cos_prev_reply",
    "cos_goal_users",
    "cos_goal_first",
    "cos_goal_replies",
    "max_cos_goal_user",
    "max_cos_earlier_goals",
    "cos_reply_prev_reply",
    "cos_reply_goal_replies",
    "cos_user_reply",
    "cos_reply_goal_first",
)
_LEXICAL = (
    "new_words_dialogue",
    "new_words_goal",
    "words_in_prev_reply",
    "log_content_words",
    "reply_new_words_dialogue",
    "reply_words_in_goal",
)
_SPANS = (
    "names_prev_reply",
    "names_goal",
    "names_earlier_goal_only",
    "new_name",
    "log_values",
    "values_seen_in_goal",
    "restated_slot_types",
    "prev_reply_code",
    "reply_code",
    "goal_had_code",
    "reply_new_name",
)
_SHAPE = (
    "log_words",
    "log_prev_reply_words",
    "log_reply_words",
    "question",
    "prev_reply_question",
    "prev_reply_empty",
    "log_goal_turns",
    "log_turn_index",
    "last_turn",
    "discourse_logit",
    "share_replies_asking",
    "mean_log_reply_words",
    "mean_log_user_words",
)

#: Column names of a feature row, in order.
FEATURE_NAMES: tuple[str, ...] = (
    _TOPIC
    + _LEXICAL
    + _SPANS
    + _SHAPE
    + tuple(f"user_act_{name}" for name in USER_ACT_PROTOTYPES)
    + tuple(f"prev_reply_act_{name}" for name in REPLY_ACT_PROTOTYPES)
    + tuple(f"reply_act_{name}" for name in REPLY_ACT_PROTOTYPES)
    + tuple(f"prev_user_act_{name}" for name in USER_ACT_PROTOTYPES)
)
_SLOT_TYPES = ("time", "day", "count")


@dataclass(frozen=True)
class DialogueView:
    """Everything about a dialogue the features read, computed once per dialogue."""

    users: list[str]
    replies: list[str]
    user_vecs: FloatArray
    reply_vecs: FloatArray
    user_spans: list[Spans]
    reply_spans: list[Spans]
    user_words: list[set[str]]
    reply_words: list[set[str]]
    user_acts: FloatArray
    reply_acts: FloatArray
    cue_logits: FloatArray

    @classmethod
    def build(
        cls,
        dialogue: Dialogue,
        embed: Embed,
        prototypes: ActPrototypes,
        cues: DiscourseCueModel | None,
    ) -> DialogueView:
        """Embed the dialogue's messages and read their spans, words, acts and cues."""
        users, replies = turn_texts(dialogue)
        vectors = embed(users + replies)
        user_vecs, reply_vecs = vectors[: len(users)], vectors[len(users) :]
        logits = [0.0] + [
            cues.logit(users[j]) if cues is not None else 0.0 for j in range(1, len(users))
        ]
        return cls(
            users=users,
            replies=replies,
            user_vecs=user_vecs,
            reply_vecs=reply_vecs,
            user_spans=[find_spans(text) for text in users],
            reply_spans=[find_spans(text) for text in replies],
            user_words=[content_words(text) for text in users],
            reply_words=[content_words(text) for text in replies],
            user_acts=prototypes.user_scores(user_vecs),
            reply_acts=prototypes.reply_scores(reply_vecs),
            cue_logits=np.asarray(logits, dtype=np.float32),
        )


def _cos(a: FloatArray, b: FloatArray) -> float:
    norm = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(a @ b) / norm if norm > 0 else 0.0


def _share(part: set[str], whole: set[str]) -> float:
    return len(part & whole) / len(part) if part else 0.0


def turn_row(view: DialogueView, j: int, start: int) -> FloatArray:
    """The feature row of turn ``j`` if the current goal began at turn ``start`` (0-based)."""
    u, r = view.user_vecs[j], view.reply_vecs[j]
    goal = range(start, j)
    goal_users, goal_replies = view.user_vecs[start:j], view.reply_vecs[start:j]
    earlier = view.user_vecs[:start]
    topic = [
        _cos(u, view.user_vecs[j - 1]),
        _cos(u, view.reply_vecs[j - 1]),
        _cos(u, goal_users.sum(axis=0)),
        _cos(u, view.user_vecs[start]),
        _cos(u, goal_replies.sum(axis=0)),
        float(np.max(goal_users @ u)),
        float(np.max(earlier @ u)) if start > 0 else 0.0,
        _cos(r, view.reply_vecs[j - 1]),
        _cos(r, goal_replies.sum(axis=0)),
        _cos(u, r),
        _cos(r, view.user_vecs[start]),
    ]
    words, reply_words = view.user_words[j], view.reply_words[j]
    seen = set().union(*view.user_words[:j], *view.reply_words[:j])
    in_goal = set().union(*(view.user_words[i] | view.reply_words[i] for i in goal))
    lexical = [
        len(words - seen) / len(words) if words else 0.0,
        len(words - in_goal) / len(words) if words else 0.0,
        _share(words, view.reply_words[j - 1]),
        float(np.log1p(len(words))),
        len(reply_words - seen - words) / len(reply_words) if reply_words else 0.0,
        _share(reply_words, in_goal),
    ]
    return np.asarray(
        topic + lexical + _span_features(view, j, start) + _shape(view, j, start) + _acts(view, j),
        dtype=np.float32,
    )


def _span_features(view: DialogueView, j: int, start: int) -> list[float]:
    text, spans = view.users[j], view.user_spans[j]
    goal_spans = merge([*view.user_spans[start:j], *view.reply_spans[start:j]])
    earlier_spans = merge([*view.user_spans[:start], *view.reply_spans[:start]])
    all_seen = goal_spans.values | earlier_spans.values
    in_goal = mentions(goal_spans.names(), spans, text)
    restated = sum(
        bool(spans.by_type[kind])
        and bool(goal_spans.by_type[kind] - spans.by_type[kind])
        and not spans.by_type[kind] <= goal_spans.by_type[kind]
        for kind in _SLOT_TYPES
    )
    reply_names = view.reply_spans[j].names()
    return [
        float(mentions(view.reply_spans[j - 1].names(), spans, text)),
        float(in_goal),
        float(not in_goal and mentions(earlier_spans.names(), spans, text)),
        float(bool(spans.names() - all_seen)),
        float(np.log1p(len(spans.values))),
        _share(set(spans.values), set(goal_spans.values)),
        float(restated),
        float(bool(view.reply_spans[j - 1].by_type["code"])),
        float(bool(view.reply_spans[j].by_type["code"])),
        float(bool(goal_spans.by_type["code"])),
        float(bool(reply_names - all_seen - spans.values)),
    ]


def _shape(view: DialogueView, j: int, start: int) -> list[float]:
    previous_reply = view.replies[j - 1]
    return [
        float(np.log1p(len(view.users[j].split()))),
        float(np.log1p(len(previous_reply.split()))),
        float(np.log1p(len(view.replies[j].split()))),
        float("?" in view.users[j]),
        float(previous_reply.rstrip().endswith("?")),
        float(not previous_reply.strip()),
        float(np.log1p(j - start)),
        float(np.log1p(j)),
        float(j == len(view.users) - 1),
        float(view.cue_logits[j]),
        # The conversation's style so far: an assistant that asks (bookings) or answers (Q&A).
        float(np.mean([reply.rstrip().endswith("?") for reply in view.replies[:j]])),
        float(np.mean([np.log1p(len(reply.split())) for reply in view.replies[:j]])),
        float(np.mean([np.log1p(len(user.split())) for user in view.users[:j]])),
    ]


def _acts(view: DialogueView, j: int) -> list[float]:
    return [
        *view.user_acts[j].tolist(),
        *view.reply_acts[j - 1].tolist(),
        *view.reply_acts[j].tolist(),
        *view.user_acts[j - 1].tolist(),
    ]
