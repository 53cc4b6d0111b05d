"""Goal-tracking metrics (ATOD, paper 000, Sections 6-8): the corpus report and the public API.

:func:`goal_tracking_report` gathers a tracker's figures over many dialogues from the metric
modules, whose public names are re-exported here:

- :mod:`evals.metrics.goal_tracking.goal_records`: the tracker's and gold goal records and states,
  and the conventions the figures share (``None`` over nothing, rates rounded to 4 decimals).
- :mod:`evals.metrics.goal_tracking.task_completion`: dGCR and NTC (Section 6.1).
- :mod:`evals.metrics.goal_tracking.goal_detection`: goal matching, detection precision, recall and
  F1, and status tracking accuracy (Section 7, Table 3).
- :mod:`evals.metrics.goal_tracking.confirmed_status`: status accuracy on the goals whose outcome
  the dialogue itself confirms (gold goals with ``confirmed``), undetected ones counted wrong.
- :mod:`evals.metrics.goal_tracking.dialogue_progress`: both against normalised dialogue progress
  (Fig. 3).
- :mod:`evals.metrics.goal_tracking.agentic_capability`: Memory Recall Accuracy and Proactivity
  Effectiveness (Section 6.2).
- :mod:`evals.metrics.goal_tracking.costs`: per-turn latency, LLM calls and tokens (Section 8.2).

Corpus figures pool counts over dialogues (goals, pairs, queries, turns), so a dialogue weighs
by what it contains; the per-dialogue figures are listed too, with their plain means under
``macro``, for per-dialogue averages and correlations (Tables 3-5).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from evals.goal_tracking_schema import AtodDialogue
from evals.metrics.goal_tracking.agentic_capability import (
    memory_recall_accuracy,
    proactivity_effectiveness,
    recall_counts,
)
from evals.metrics.goal_tracking.confirmed_status import (
    confirmed_row,
    confirmed_status_counts,
    confirmed_status_report,
)
from evals.metrics.goal_tracking.costs import cost_report
from evals.metrics.goal_tracking.dialogue_progress import (
    PairsAt,
    pool_progress_curves,
    progress_curve,
)
from evals.metrics.goal_tracking.goal_detection import (
    DetectionScores,
    GoalKey,
    Similarity,
    detection_scores,
    goal_detection_prf,
    goal_key,
    match_goals,
    status_hits,
    status_tracking_accuracy,
)
from evals.metrics.goal_tracking.goal_records import (
    NOT_MENTIONED,
    GoalRecord,
    Pair,
    gold_goal_records,
    gold_statuses_at,
    is_mentioned,
    mean_or_none,
    predicted_states_at,
    ratio,
    round4,
)
from evals.metrics.goal_tracking.memory_state import memory_state_counts, memory_state_report
from evals.metrics.goal_tracking.metric_validity import metric_validity
from evals.metrics.goal_tracking.response_quality import (
    response_quality_report,
    response_quality_row,
)
from evals.metrics.goal_tracking.task_completion import (
    dependency_aware_goal_completion_rate,
    dgcr,
    goal_counts,
    turns_to_completion,
    turns_to_completion_per_goal,
)

__all__ = [
    "NOT_MENTIONED",
    "DetectionScores",
    "GoalKey",
    "GoalRecord",
    "GoalTrackingTally",
    "Matcher",
    "Pair",
    "PairsAt",
    "Similarity",
    "cost_report",
    "dependency_aware_goal_completion_rate",
    "dgcr",
    "goal_detection_prf",
    "goal_key",
    "goal_tracking_report",
    "gold_goal_records",
    "gold_statuses_at",
    "match_goals",
    "memory_recall_accuracy",
    "pool_progress_curves",
    "predicted_states_at",
    "proactivity_effectiveness",
    "progress_curve",
    "status_tracking_accuracy",
    "turns_to_completion",
    "turns_to_completion_per_goal",
]


def goal_tracking_report(
    dialogue_results: Iterable[GoalRecord],
    *,
    key: GoalKey | None = goal_key,
    similar: Similarity | None = None,
    threshold: float = 0.5,
    bins: int = 10,
) -> dict[str, Any]:
    """Corpus goal-tracking figures of a tracker over many dialogues (Sections 6-8).

    Each result is ``{"dialogue_id", "gold", "goals", "turns", "costs", "queries"}`` with
    ``gold`` an :class:`AtodDialogue` (or its dict) or ``None``, and optionally
    ``proactivity_verdicts``. dGCR and NTC are read from the tracker's memory (final ``status``,
    ``dependencies``, ``status_history``) and come from every dialogue, as do costs; detection,
    status accuracy, the progress curve and memory recall need gold. Final-state figures use
    the goals' ``status``; the curve uses ``turns``, so its last point can differ if the two
    disagree. A dialogue without ``turns`` has no curve. ``key``, ``similar`` and
    ``threshold`` go to :func:`match_goals`, which re-matches at every curve point.

    Returns:
        ``dgcr``, ``dgcr_gold`` (the same on the gold annotations), ``n_decided_goals``,
        ``n_blocked_goals``; ``ntc``, ``ntc_gold``, ``n_completed_goals``;
        ``goal_detection_precision``, ``goal_detection_recall``, ``goal_detection_f1``,
        ``n_pred_goals``, ``n_gold_goals``, ``n_matched_goals``; ``status_accuracy``; the
        :func:`~evals.metrics.goal_tracking.confirmed_status.confirmed_status_report` figures
        (``confirmed_status_accuracy``, its completed and failed parts, the breakdown);
        ``progress_curve`` (pooled); ``memory_recall_accuracy``, ``n_memory_queries``,
        ``memory_recall_state_accuracy`` and ``memory_recall_by_aspect`` (slots, status,
        history: :mod:`~evals.metrics.goal_tracking.memory_state`); ``metric_validity``
        (Table 5: :mod:`~evals.metrics.goal_tracking.metric_validity`); ``response_quality``
        (:mod:`~evals.metrics.goal_tracking.response_quality`);
        ``proactivity_effectiveness`` (a dict, see :func:`proactivity_effectiveness`); the
        :func:`cost_report` figures; ``n_dialogues``, ``n_gold_dialogues``; ``dialogues``:
        per dialogue ``dialogue_id``, ``dgcr``, ``ntc``, ``goal_detection_f1``,
        ``status_accuracy``, ``memory_recall_accuracy`` and ``counts``; ``macro``: their means
        over the dialogues where each is defined. Pooled as the module notes say; rounded.
    """
    tally = GoalTrackingTally(key=key, similar=similar, threshold=threshold, bins=bins)
    for result in dialogue_results:
        tally.add(result)
    return tally.report()


#: The per-dialogue figures whose plain means are the report's ``macro``.
PER_DIALOGUE = ("dgcr", "ntc", "goal_detection_f1", "status_accuracy", "memory_recall_accuracy")


class GoalTrackingTally:
    """:func:`goal_tracking_report` one dialogue at a time, so a run need not keep its gold.

    ``add`` scores a dialogue and keeps only counts, spans, curve points and cost records;
    ``report`` pools them. Arguments as in :func:`goal_tracking_report`.
    """

    def __init__(
        self,
        *,
        key: GoalKey | None = goal_key,
        similar: Similarity | None = None,
        threshold: float = 0.5,
        bins: int = 10,
    ) -> None:
        self.key, self.similar, self.threshold, self.bins = key, similar, threshold, bins
        self.totals: dict[str, int] = defaultdict(int)
        self.spans: list[int] = []
        self.gold_spans: list[int] = []
        self.curves: list[list[dict[str, Any]]] = []
        self.costs: list[GoalRecord] = []
        self.verdicts: list[bool | None] | None = None
        self.rows: list[dict[str, Any]] = []
        self.confirmed: Counter[str] = Counter()
        self.quality_reasons: Counter[str] = Counter()

    def _matcher(
        self, predicted: Sequence[GoalRecord], gold: AtodDialogue, turn: int | None
    ) -> list[Pair]:
        return match_goals(
            predicted, gold, turn=turn, key=self.key, similar=self.similar, threshold=self.threshold
        )

    def add(self, result: GoalRecord) -> dict[str, Any]:
        """Score one dialogue's result; returns its row (figures and the ``counts`` behind them)."""
        goals = list(result.get("goals") or [])
        completed, decided, blocked = goal_counts(goals)
        dialogue_spans = turns_to_completion_per_goal(goals)
        _add(self.totals, completed=completed, decided=decided, blocked=blocked)
        self.spans += dialogue_spans
        self.costs += list(result.get("costs") or [])
        if result.get("proactivity_verdicts") is not None:
            self.verdicts = (self.verdicts or []) + list(result["proactivity_verdicts"])
        counts: dict[str, int] = {"completed": completed, "decided": decided}
        row: dict[str, Any] = {
            "dialogue_id": result.get("dialogue_id"),
            "dgcr": ratio(completed, decided),
            "ntc": mean_or_none(dialogue_spans),
            "goal_detection_f1": None,
            "status_accuracy": None,
            "memory_recall_accuracy": None,
            "proactivity_effectiveness": _judged_share(result.get("proactivity_verdicts")),
            **response_quality_row(result.get("response_quality")),
        }
        if result.get("gold") is not None:
            gold = result["gold"]
            gold = gold if isinstance(gold, AtodDialogue) else AtodDialogue.model_validate(gold)
            gold_goals = gold_goal_records(gold)
            gold_completed, gold_decided, _ = goal_counts(gold_goals)
            self.gold_spans += turns_to_completion_per_goal(gold_goals)
            found, confirmed = _gold_counts(goals, result.get("queries") or [], gold, self._matcher)
            self.confirmed += confirmed
            counts |= found
            _add(self.totals, gold_dialogues=1, gold_completed=gold_completed, **found)
            _add(self.totals, gold_decided=gold_decided)
            f1 = detection_scores(found["tp"], found["n_pred"], found["n_gold"])["f1"]
            row["goal_detection_f1"] = f1
            row["status_accuracy"] = ratio(found["status_correct"], found["tp"])
            row["memory_recall_accuracy"] = ratio(found["recall_correct"], found["recall_judged"])
            turns = list(result.get("turns") or [])
            if turns:
                pairs_at = _rematch(goals, turns, gold, self._matcher)
                self.curves.append(progress_curve(turns, gold.turns, pairs_at, self.bins))
        reason = (result.get("response_quality") or {}).get("reason")
        if reason:
            self.quality_reasons[str(reason)] += 1
        row["counts"] = counts
        self.rows.append(row)  # unrounded: the macro means are taken over exact values
        return _rounded(row)

    def report(self) -> dict[str, Any]:
        """The corpus figures so far (see :func:`goal_tracking_report`)."""
        totals, rows = self.totals, self.rows
        detection = detection_scores(totals["tp"], totals["n_pred"], totals["n_gold"])
        summary = {
            "n_dialogues": len(rows),
            "n_gold_dialogues": totals["gold_dialogues"],
            "dgcr": round4(ratio(totals["completed"], totals["decided"])),
            "dgcr_gold": round4(ratio(totals["gold_completed"], totals["gold_decided"])),
            "n_decided_goals": totals["decided"],
            "n_blocked_goals": totals["blocked"],
            "ntc": round4(mean_or_none(self.spans)),
            "ntc_gold": round4(mean_or_none(self.gold_spans)),
            "n_completed_goals": len(self.spans),
            "goal_detection_precision": round4(detection["precision"]),
            "goal_detection_recall": round4(detection["recall"]),
            "goal_detection_f1": round4(detection["f1"]),
            "n_pred_goals": totals["n_pred"],
            "n_gold_goals": totals["n_gold"],
            "n_matched_goals": totals["tp"],
            "status_accuracy": round4(ratio(totals["status_correct"], totals["tp"])),
            "progress_curve": pool_progress_curves(self.curves),
            "memory_recall_accuracy": round4(
                ratio(totals["recall_correct"], totals["recall_judged"])
            ),
            "n_memory_queries": totals["recall_judged"],
            "proactivity_effectiveness": proactivity_effectiveness(self.verdicts),
        }
        macro = {
            name: round4(mean_or_none([row[name] for row in rows if row[name] is not None]))
            for name in PER_DIALOGUE
        }
        dialogues = [_rounded(row) for row in rows]
        summary["response_quality"] = response_quality_report(rows, self.quality_reasons)
        summary["metric_validity"] = metric_validity(rows)
        state = {
            name[len("memory_") :]: n for name, n in totals.items() if name.startswith("memory_")
        }
        figures = summary | memory_state_report(state)
        figures |= confirmed_status_report(self.confirmed) | cost_report(self.costs)
        return figures | {"dialogues": dialogues, "macro": macro}


def _judged_share(verdicts: Sequence[bool | None] | None) -> float | None:
    """One dialogue's proactivity effectiveness (None without a judged action)."""
    judged = [v for v in verdicts or [] if v is not None]
    return ratio(sum(judged), len(judged))


def _rounded(row: dict[str, Any]) -> dict[str, Any]:
    keep = ("dialogue_id", "counts")
    return {name: value if name in keep else round4(value) for name, value in row.items()}


Matcher = Callable[[Sequence[GoalRecord], AtodDialogue, int | None], list[Pair]]


def _gold_counts(
    goals: Sequence[GoalRecord],
    queries: Iterable[GoalRecord],
    gold: AtodDialogue,
    matcher: Matcher,
) -> tuple[dict[str, int], Counter[str]]:
    """One dialogue's final-state detection, status and memory-recall counts; confirmed goals."""
    pairs = matcher(goals, gold, None)
    final = gold_statuses_at(gold.turns)
    pred = {str(goal["goal_id"]): goal.get("status") for goal in goals}
    queries = list(queries)
    correct, judged = recall_counts(queries)
    confirmed = confirmed_status_counts(pairs, pred, gold)
    return confirmed_row(confirmed) | {
        "tp": len(pairs),
        "n_pred": len(goals),
        "n_gold": sum(is_mentioned(status) for status in final.values()),
        "status_correct": status_hits(pairs, pred, final),
        "recall_correct": correct,
        "recall_judged": judged,
        **{f"memory_{name}": count for name, count in memory_state_counts(queries).items()},
    }, confirmed


def _rematch(
    goals: Sequence[GoalRecord], turns: Sequence[GoalRecord], gold: AtodDialogue, matcher: Matcher
) -> Callable[[int], list[Pair]]:
    """Pairs at utterance t between the goals the tracker held then and the gold ones."""

    def pairs_at(turn: int) -> list[Pair]:
        held = predicted_states_at(turns, turn)
        return matcher([goal for goal in goals if str(goal["goal_id"]) in held], gold, turn)

    return pairs_at


def _add(totals: dict[str, int], **counts: int) -> None:
    for name, count in counts.items():
        totals[name] += count
