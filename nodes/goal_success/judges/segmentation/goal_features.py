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

from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from functools import cached_property
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

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

    # What the rows of several turns read, worked out once per dialogue (on first use) with
    # the arithmetic a single row used, so every row keeps its bits.

    @cached_property
    def user_norms(self) -> FloatArray:
        """``np.linalg.norm`` of each user message's vector (its ``sqrt(v @ v)``)."""
        return _norms(self.user_vecs)

    @cached_property
    def reply_norms(self) -> FloatArray:
        """``np.linalg.norm`` of each reply's vector (its ``sqrt(v @ v)``)."""
        return _norms(self.reply_vecs)

    @cached_property
    def user_log_words(self) -> NDArray[np.float64]:
        """``log1p`` of each user message's word count."""
        return _log_words(self.users)

    @cached_property
    def reply_log_words(self) -> NDArray[np.float64]:
        """``log1p`` of each reply's word count."""
        return _log_words(self.replies)

    @cached_property
    def reply_asks(self) -> NDArray[np.float64]:
        """1.0 where a reply ends with a question, else 0.0."""
        asks = [reply.rstrip().endswith("?") for reply in self.replies]
        return np.asarray(asks, dtype=np.float64)

    @cached_property
    def replies_asking_before(self) -> list[float]:
        """Item ``j``: how many of replies ``0..j-1`` end with a question (``sum(reply_asks[:j])``).

        A count of 0.0s and 1.0s is exact in any order, so ``np.mean(reply_asks[:j])`` is this
        divided by ``j``, to the bit, with no numpy call per turn.
        """
        counts = [0.0]
        for asks in self.reply_asks.tolist():
            counts.append(counts[-1] + asks)
        return counts

    @cached_property
    def turn_words(self) -> list[set[str]]:
        """Each turn's content words, the user's and the reply's together."""
        return [user | reply for user, reply in zip(self.user_words, self.reply_words, strict=True)]

    @cached_property
    def words_before(self) -> list[frozenset[str]]:
        """Item ``j``: the content words of turns ``0..j-1`` (the dialogue seen so far)."""
        return _unions_before(self.turn_words)

    @cached_property
    def values_before(self) -> list[frozenset[str]]:
        """Item ``j``: every span value of turns ``0..j-1`` (the dialogue seen so far)."""
        pairs = zip(self.user_spans, self.reply_spans, strict=True)
        return _unions_before(user.values | reply.values for user, reply in pairs)

    @cached_property
    def names_before(self) -> list[frozenset[str]]:
        """Item ``i``: the names of turns ``0..i-1`` (the goals before one starting at ``i``)."""
        pairs = zip(self.user_spans, self.reply_spans, strict=True)
        return _unions_before(user.names() | reply.names() for user, reply in pairs)

    @cached_property
    def goals(self) -> dict[int, _Goal]:
        """The last goal worked out for each first turn (see :func:`_goal_so_far`)."""
        return {}

    @cached_property
    def fixed_rows(self) -> FloatArray:
        """Row ``j``: turn ``j``'s features but the goal's (:data:`GOAL_FEATURES`, left 0.0).

        Row 0 (the first turn, never scored) is all zeros. The dialogue acts are copied as
        float32 arrays (a row read them as float32 values too).
        """
        rows = np.zeros((len(self.users), len(FEATURE_NAMES)), dtype=np.float32)
        if len(self.users) > 1:
            users, replies = self.user_vecs, self.reply_vecs
            user_norms, reply_norms = self.user_norms, self.reply_norms
            # Turn j's four cosines with its own and the previous turn's messages, for every
            # j at once (np.vecdot: the kernel a @ b uses, so each keeps its bits).
            topic = zip(
                _cosines(users[1:], users[:-1], user_norms[1:], user_norms[:-1]),
                _cosines(users[1:], replies[:-1], user_norms[1:], reply_norms[:-1]),
                _cosines(replies[1:], replies[:-1], reply_norms[1:], reply_norms[:-1]),
                _cosines(users[1:], replies[1:], user_norms[1:], reply_norms[1:]),
                strict=True,
            )
            own = [_fixed_row(self, j, *cosines) for j, cosines in enumerate(topic, start=1)]
            rows[1:, : len(own[0])] = np.asarray(own, dtype=np.float32)
            rows[1:, len(own[0]) :] = np.concatenate(
                [
                    self.user_acts[1:],
                    self.reply_acts[:-1],
                    self.reply_acts[1:],
                    self.user_acts[:-1],
                ],
                axis=1,
            )
        return rows


def _unions_before(per_turn: Iterable[AbstractSet[str]]) -> list[frozenset[str]]:
    """Item ``i``: the union of ``per_turn``'s first ``i`` sets."""
    before: list[frozenset[str]] = [frozenset()]
    for values in per_turn:
        before.append(before[-1] | values)
    return before


def _mean_of_first(values: NDArray[np.float64], j: int) -> float:
    """``np.mean(values[:j])`` to the bit, without np.mean's overhead (three calls a turn).

    np.mean of float64 (or bool, summed as float64) is numpy's sum divided by the count;
    the sum is ``add.reduce``, which ``sum()`` calls through a Python wrapper.
    """
    return float(np.add.reduce(values[:j])) / j


#: ``float(np.log1p(k))`` of the small counts the features take (words, values, turns), each
#: worked out by numpy as a row did: a row reads six, and a numpy call on a scalar costs about
#: a microsecond, a list lookup a few hundredths of one.
_LOG1P_OF_COUNT: list[float] = [float(np.log1p(count)) for count in range(1024)]


def _log1p(count: int) -> float:
    """``float(np.log1p(count))`` of a count (the table's value for a small one)."""
    if 0 <= count < len(_LOG1P_OF_COUNT):
        return _LOG1P_OF_COUNT[count]
    return float(np.log1p(count))


def _log_words(texts: list[str]) -> NDArray[np.float64]:
    return np.asarray([_log1p(len(text.split())) for text in texts], dtype=np.float64)


def _norms(vectors: FloatArray) -> FloatArray:
    """``np.linalg.norm`` of each row (float32 ``sqrt(v @ v)``), all rows at once."""
    norms: FloatArray = np.sqrt(np.vecdot(vectors, vectors))
    return norms


def _cosines(a: FloatArray, b: FloatArray, norm_a: FloatArray, norm_b: FloatArray) -> list[float]:
    """:func:`_cos` of each row pair of ``a`` and ``b`` (the same float32 and float64 steps)."""
    norms = (norm_a * norm_b).astype(np.float64)
    dots = np.vecdot(a, b).astype(np.float64)
    out = np.zeros(len(dots), dtype=np.float64)
    np.divide(dots, norms, out=out, where=norms > 0)
    cosines: list[float] = out.tolist()
    return cosines


def _cos(a: FloatArray, b: FloatArray, norm_a: np.floating[Any], norm_b: np.floating[Any]) -> float:
    """Cosine of ``a`` and ``b`` given their ``np.linalg.norm`` (float32, multiplied as such)."""
    norm = float(norm_a * norm_b)
    return float(a.dot(b)) / norm if norm > 0 else 0.0  # dot: a @ b's kernel, less dispatch


def _norm(vector: FloatArray) -> np.floating[Any]:
    """``np.linalg.norm(vector)`` of a 1-D float vector: what it computes, without its checks."""
    norm: np.floating[Any] = np.sqrt(vector.dot(vector))
    return norm


def _share(part: AbstractSet[str], whole: AbstractSet[str]) -> float:
    return len(part & whole) / len(part) if part else 0.0


#: The features that depend on where the current goal began; every other column of a turn's
#: row is the same whatever the goal, so a dialogue works those out once (``fixed_rows``).
GOAL_FEATURES = (
    "cos_goal_users",
    "cos_goal_first",
    "cos_goal_replies",
    "max_cos_goal_user",
    "max_cos_earlier_goals",
    "cos_reply_goal_replies",
    "cos_reply_goal_first",
    "new_words_goal",
    "reply_words_in_goal",
    "names_goal",
    "names_earlier_goal_only",
    "values_seen_in_goal",
    "restated_slot_types",
    "goal_had_code",
    "log_goal_turns",
)
_GOAL_COLUMNS = np.array([FEATURE_NAMES.index(name) for name in GOAL_FEATURES], dtype=np.intp)


def turn_row(view: DialogueView, j: int, start: int) -> FloatArray:
    """The feature row of turn ``j`` if the current goal began at turn ``start`` (0-based).

    The turn's own columns come from ``view.fixed_rows``, the goal's are written over them
    (python floats rounded to float32 either way, so the row keeps its bits).
    """
    row: FloatArray = view.fixed_rows[j].copy()
    row[_GOAL_COLUMNS] = _goal_features(view, j, start)
    return row


class _Goal(NamedTuple):
    """Turns ``start..end-1`` taken together: what the goal's features read of them.

    A tuple: one is made per decoded turn, and a frozen dataclass sets each field slowly.
    """

    end: int
    users_sum: FloatArray
    replies_sum: FloatArray
    words: set[str]
    spans: Spans


def _goal_so_far(view: DialogueView, start: int, end: int) -> _Goal:
    """The goal of turns ``start..end-1``, grown from ``start..end-2`` when that was the last.

    The greedy decoder asks for one goal a turn longer each time. Growing it gives the same
    values: numpy sums a block's rows one after the other (axis 0), and unions are unions.
    """
    last = view.goals.get(start)
    if last is not None and last.end == end - 1:
        turn = end - 1
        goal = _Goal(
            end,
            last.users_sum + view.user_vecs[turn],
            last.replies_sum + view.reply_vecs[turn],
            last.words | view.turn_words[turn],
            merge([last.spans, view.user_spans[turn], view.reply_spans[turn]]),
        )
    else:
        goal = _Goal(
            end,
            view.user_vecs[start:end].sum(axis=0),
            view.reply_vecs[start:end].sum(axis=0),
            set().union(*view.turn_words[start:end]),
            merge([*view.user_spans[start:end], *view.reply_spans[start:end]]),
        )
    view.goals[start] = goal
    return goal


def _goal_features(view: DialogueView, j: int, start: int) -> list[float]:
    """The :data:`GOAL_FEATURES` of turn ``j`` against the goal begun at ``start``, in order."""
    users, replies = view.user_vecs, view.reply_vecs
    user_norms, reply_norms = view.user_norms, view.reply_norms
    u, r = users[j], replies[j]
    u_norm, r_norm = user_norms[j], reply_norms[j]
    goal_users = users[start:j]
    goal = _goal_so_far(view, start, j)
    goal_users_sum, goal_replies_sum = goal.users_sum, goal.replies_sum
    goal_replies_norm = _norm(goal_replies_sum)
    earlier = users[:start]
    words, reply_words = view.user_words[j], view.reply_words[j]
    in_goal = goal.words
    text, spans = view.users[j], view.user_spans[j]
    goal_spans = goal.spans
    names_in_goal = mentions(goal_spans.names(), spans, text)
    restated = sum(
        bool(spans.by_type[kind])
        and bool(goal_spans.by_type[kind] - spans.by_type[kind])
        and not spans.by_type[kind] <= goal_spans.by_type[kind]
        for kind in _SLOT_TYPES
    )
    return [
        _cos(u, goal_users_sum, u_norm, _norm(goal_users_sum)),
        _cos(u, users[start], u_norm, user_norms[start]),
        _cos(u, goal_replies_sum, u_norm, goal_replies_norm),
        float(np.maximum.reduce(goal_users @ u)),  # .max() without its wrapper
        float(np.maximum.reduce(earlier @ u)) if start > 0 else 0.0,
        _cos(r, goal_replies_sum, r_norm, goal_replies_norm),
        _cos(r, users[start], r_norm, user_norms[start]),
        len(words - in_goal) / len(words) if words else 0.0,
        _share(reply_words, in_goal),
        float(names_in_goal),
        float(not names_in_goal and mentions(view.names_before[start], spans, text)),
        _share(spans.values, goal_spans.values),
        float(restated),
        float(bool(goal_spans.by_type["code"])),
        _log1p(j - start),
    ]


def _fixed_row(
    view: DialogueView,
    j: int,
    cos_prev_user: float,
    cos_prev_reply: float,
    cos_reply_prev_reply: float,
    cos_user_reply: float,
) -> list[float]:
    """Turn ``j``'s row with 0.0 in every :data:`GOAL_FEATURES` column (cosines given)."""
    topic = [
        cos_prev_user,
        cos_prev_reply,
        0.0,  # cos_goal_users
        0.0,  # cos_goal_first
        0.0,  # cos_goal_replies
        0.0,  # max_cos_goal_user
        0.0,  # max_cos_earlier_goals
        cos_reply_prev_reply,
        0.0,  # cos_reply_goal_replies
        cos_user_reply,
        0.0,  # cos_reply_goal_first
    ]
    words, reply_words = view.user_words[j], view.reply_words[j]
    seen = view.words_before[j]
    lexical = [
        len(words - seen) / len(words) if words else 0.0,
        0.0,  # new_words_goal
        _share(words, view.reply_words[j - 1]),
        _log1p(len(words)),
        len(reply_words - seen - words) / len(reply_words) if reply_words else 0.0,
        0.0,  # reply_words_in_goal
    ]
    return topic + lexical + _span_features(view, j) + _shape(view, j)


def _span_features(view: DialogueView, j: int) -> list[float]:
    text, spans = view.users[j], view.user_spans[j]
    all_seen = view.values_before[j]  # the goal's values and the earlier goals'
    reply_names = view.reply_spans[j].names()
    return [
        float(mentions(view.reply_spans[j - 1].names(), spans, text)),
        0.0,  # names_goal
        0.0,  # names_earlier_goal_only
        float(bool(spans.names() - all_seen)),
        _log1p(len(spans.values)),
        0.0,  # values_seen_in_goal
        0.0,  # restated_slot_types
        float(bool(view.reply_spans[j - 1].by_type["code"])),
        float(bool(view.reply_spans[j].by_type["code"])),
        0.0,  # goal_had_code
        float(bool(reply_names - all_seen - spans.values)),
    ]


def _shape(view: DialogueView, j: int) -> list[float]:
    return [
        float(view.user_log_words[j]),
        float(view.reply_log_words[j - 1]),
        float(view.reply_log_words[j]),
        float("?" in view.users[j]),
        float(view.reply_asks[j - 1]),
        float(not view.replies[j - 1].strip()),
        0.0,  # log_goal_turns
        _log1p(j),
        float(j == len(view.users) - 1),
        float(view.cue_logits[j]),
        # The conversation's style so far: an assistant that asks (bookings) or answers (Q&A).
        view.replies_asking_before[j] / j,
        _mean_of_first(view.reply_log_words, j),
        _mean_of_first(view.user_log_words, j),
    ]
