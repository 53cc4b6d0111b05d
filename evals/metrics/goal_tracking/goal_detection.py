"""Goal detection and status tracking (ATOD, paper 000, Section 7 and Table 3).

Goal Detection Accuracy ("coverage of correctly identified active goals") and Status Tracking
Accuracy ("state classification accuracy among detected goals"), where the paper leaves room:

- A gold goal exists for detection once mentioned, so completed, failed and abandoned goals
  stay in the set, as they stay in memory.
- Goals are paired one-to-one by :func:`match_goals`; precision is pairs / predicted, recall
  pairs / gold, F1 = 2 pairs / (predicted + gold): 0 when only one side is empty.
- Status tracking accuracy is over the matched pairs.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Container, Hashable, Mapping, Sequence
from functools import cached_property
from typing import Any

from typing_extensions import TypedDict

from todeval.evals.goal_tracking_schema import AtodDialogue, AtodGoal
from todeval.evals.metrics.goal_tracking.goal_records import (
    GoalRecord,
    GoldTimeline,
    Pair,
    canonical_status,
    is_mentioned,
    ratio,
)

GoalKey = Callable[[GoalRecord | AtodGoal], Hashable | None]


Similarity = Callable[[GoalRecord, AtodGoal], float]


class DetectionScores(TypedDict):
    """Goal detection precision, recall and F1 with their counts."""

    precision: float | None
    recall: float | None
    f1: float | None
    tp: int
    n_pred: int
    n_gold: int


def goal_key(goal: GoalRecord | AtodGoal) -> Hashable | None:
    """``(service or domain, intent)`` lower-cased and stripped; ``None`` if either is empty."""
    raw: tuple[object, object]
    if isinstance(goal, AtodGoal):
        raw = (goal.domain, goal.intent)
    else:
        raw = (goal.get("service") or goal.get("domain"), goal.get("intent"))
    service, intent = (str(part or "").strip().lower() for part in raw)
    return (service, intent) if service and intent else None


def match_goals(
    predicted: Sequence[GoalRecord],
    gold: AtodDialogue,
    *,
    turn: int | None = None,
    key: GoalKey | None = goal_key,
    similar: Similarity | None = None,
    threshold: float = 0.5,
    timeline: GoldTimeline | None = None,
) -> list[Pair]:
    """Pair predicted goals with the gold goals mentioned by ``turn`` (None: the end), one-to-one.

    Pass only the predicted goals the tracker held at that point. Both sides are ordered by
    first mention. First by ``key``: a goal pairs with the first free goal of the other side
    with an equal key (differing keys never pair). Then, if ``similar`` is given, among free
    goals where either side has no key, pairs scoring at least ``threshold`` are taken
    greedily, highest first (ties in gold then prediction order); greedy, not optimal.
    ``timeline`` is the gold's (:class:`GoldTimeline`), when the caller has it already.
    :class:`GoalMatcher` matches one dialogue at many turns.

    Raises:
        ValueError: Two predicted goals share an id, or ``turn`` is outside the dialogue.
    """
    matcher = GoalMatcher(
        predicted, gold, key=key, similar=similar, threshold=threshold, timeline=timeline
    )
    return matcher.at(turn)


class GoalMatcher:
    """:func:`match_goals` of one dialogue's predicted goals, at as many turns as asked.

    What no turn changes (each goal's key, both sides' order of first mention) is worked out
    once, on the first match; :meth:`at` takes the goals held at its turn. The pairs depend on
    nothing else than which goals each side has, so a turn with the same goals as an earlier
    one (most points of a progress curve) gets the same pairs again.

    Raises:
        ValueError: Two predicted goals share an id.
    """

    def __init__(
        self,
        predicted: Sequence[GoalRecord],
        gold: AtodDialogue,
        *,
        key: GoalKey | None = goal_key,
        similar: Similarity | None = None,
        threshold: float = 0.5,
        timeline: GoldTimeline | None = None,
    ) -> None:
        self.predicted, self.gold = predicted, gold
        self.ids = [str(goal["goal_id"]) for goal in predicted]
        if len(set(self.ids)) != len(self.ids):
            raise ValueError(f"predicted goal ids must be unique, got {self.ids}")
        self.key, self.similar, self.threshold = key, similar, threshold
        self.timeline = timeline or GoldTimeline.of(gold.turns)
        self._matched: dict[tuple[tuple[int, ...], tuple[int, ...]], list[Pair]] = {}

    @cached_property
    def _preds(self) -> list[tuple[int, Hashable | None]]:
        """The predicted goals (indices) by first mention, ties as given, with their keys."""
        order = sorted(
            range(len(self.predicted)), key=lambda i: (_first_turn(self.predicted[i]), i)
        )
        return [(i, self._key(self.predicted[i])) for i in order]

    @cached_property
    def _golds(self) -> list[tuple[AtodGoal, Hashable | None]]:
        """The gold goals ever mentioned, by first mention, with their keys.

        ``goal_list``, then the goals only the statuses name, in the order they come up (the
        statuses at a turn name them in that order too).
        """
        listed = {goal.id for goal in self.gold.goal_list}
        named = self.timeline.states[-1]
        unlisted = [AtodGoal(id=goal_id) for goal_id in named if goal_id not in listed]
        first = self.timeline.first
        return sorted(
            (
                (goal, self._key(goal))
                for goal in [*self.gold.goal_list, *unlisted]
                if goal.id in first
            ),
            key=lambda item: first[item[0].id],
        )

    def _key(self, goal: GoalRecord | AtodGoal) -> Hashable | None:
        return None if self.key is None else self.key(goal)

    def at(self, turn: int | None = None, held: Container[str] | None = None) -> list[Pair]:
        """The pairs at ``turn`` (None: the end) of the predicted goals ``held`` (None: all).

        The same as :func:`match_goals` of the predicted goals whose ids are in ``held``.

        Raises:
            ValueError: ``turn`` is outside the dialogue.
        """
        state = self.timeline.view(turn)
        gold_ids, pred_ids = self._side_ids
        # each side as positions in its first-mention order: the pairs' cache key
        golds = tuple(k for k, gold_id in enumerate(gold_ids) if is_mentioned(state.get(gold_id)))
        preds = (
            tuple(range(len(pred_ids)))
            if held is None
            else tuple(k for k, pred_id in enumerate(pred_ids) if pred_id in held)
        )
        pairs = self._matched.get((preds, golds))
        if pairs is None:
            pairs = self._matched[(preds, golds)] = self._pairs(
                [self._golds[k] for k in golds], [self._preds[k] for k in preds]
            )
        return list(pairs)

    @cached_property
    def _side_ids(self) -> tuple[list[str], list[str]]:
        """The ids of :attr:`_golds` and of :attr:`_preds`, in their order."""
        return [goal.id for goal, _ in self._golds], [self.ids[i] for i, _ in self._preds]

    def _pairs(
        self,
        golds: list[tuple[AtodGoal, Hashable | None]],
        preds: list[tuple[int, Hashable | None]],
    ) -> list[Pair]:
        """Pairs of these gold and predicted goals (with their keys), each by first mention."""
        ids, pairs = self.ids, []
        free = {goal.id for goal, _ in golds}
        if self.key is not None:
            queues: dict[Hashable, list[str]] = defaultdict(list)
            for goal, gold_key in golds:
                if gold_key is not None:
                    queues[gold_key].append(goal.id)
            for i, pred_key in preds:
                if pred_key is not None and queues.get(pred_key):
                    gold_id = queues[pred_key].pop(0)
                    pairs.append((ids[i], gold_id))
                    free.discard(gold_id)
        if self.similar is not None:
            similar = self.similar
            taken = {pred_id for pred_id, _ in pairs}
            scored = [
                (similar(self.predicted[i], goal), g, i)
                for g, (goal, gold_key) in enumerate(golds)
                for i, pred_key in preds
                if goal.id in free
                and ids[i] not in taken
                and (self.key is None or gold_key is None or pred_key is None)
            ]
            for score, g, i in sorted(scored, key=lambda item: (-item[0], item[1], item[2])):
                gold_id = golds[g][0].id
                if score >= self.threshold and gold_id in free and ids[i] not in taken:
                    pairs.append((ids[i], gold_id))
                    free.discard(gold_id)
                    taken.add(ids[i])
        return pairs


def goal_detection_prf(pairs: Sequence[Pair], n_pred: int, n_gold: int) -> DetectionScores:
    """Goal detection precision, recall and F1 from matched pairs (Table 3), unrounded.

    F1 = 2 pairs / (n_pred + n_gold) is ``None`` only if both are 0.

    Raises:
        ValueError: An id appears in two pairs, or there are more pairs than goals on a side.
    """
    check_one_to_one(pairs)
    if len(pairs) > min(n_pred, n_gold):
        raise ValueError(f"{len(pairs)} pairs for {n_pred} predicted and {n_gold} gold goals")
    return detection_scores(len(pairs), n_pred, n_gold)


def status_tracking_accuracy(
    pairs: Sequence[Pair], pred_status: Mapping[str, str], gold_status: Mapping[str, str]
) -> float | None:
    """Share of matched goals whose predicted status equals the gold one (case-blind).

    Raises:
        ValueError: A pair names a goal missing from its status map.
    """
    return ratio(status_hits(pairs, pred_status, gold_status), len(pairs))


def detection_scores(tp: int, n_pred: int, n_gold: int) -> DetectionScores:
    """Precision, recall and F1 from ``tp`` matched pairs (see :func:`goal_detection_prf`)."""
    return {
        "precision": ratio(tp, n_pred),
        "recall": ratio(tp, n_gold),
        "f1": ratio(2 * tp, n_pred + n_gold),
        "tp": tp,
        "n_pred": n_pred,
        "n_gold": n_gold,
    }


def status_hits(
    pairs: Sequence[Pair], pred_status: Mapping[str, Any], gold_status: Mapping[str, Any]
) -> int:
    """How many pairs have the same predicted and gold status (case-blind).

    Raises:
        ValueError: A pair names a goal missing from its status map.
    """
    missing = [p for p, g in pairs if p not in pred_status] + [
        g for p, g in pairs if g not in gold_status
    ]
    if missing:
        raise ValueError(f"no status for matched goal(s) {missing}")
    return sum(
        canonical_status(pred_status[p]) == canonical_status(gold_status[g]) for p, g in pairs
    )


def check_one_to_one(pairs: Sequence[Pair]) -> None:
    """Raise ``ValueError`` if an id appears in two pairs."""
    for side in (0, 1):
        ids = [pair[side] for pair in pairs]
        if len(set(ids)) != len(ids):
            raise ValueError(f"pairs must be one-to-one, got {list(pairs)}")


def _first_turn(goal: GoalRecord) -> float:
    turns = [
        int(e["turn"])
        for e in goal.get("status_history") or []
        if is_mentioned(canonical_status(e["status"]))
    ]
    return min(turns, default=float("inf"))
