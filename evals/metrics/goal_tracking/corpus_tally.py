"""Goal-tracking figures over a corpus, one dialogue at a time (ATOD, paper 000, Sections 6-8).

:class:`GoalTrackingTally` scores each dialogue's result against its gold as it comes and keeps
counts and sums only (:func:`~evals.metrics.goal_tracking.report.goal_tracking_report` is the
same over a list, with the per-dialogue rows).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from todeval.evals.goal_tracking_schema import AtodDialogue
from todeval.evals.metrics.goal_tracking.agentic_capability import ProactivityCounts, recall_counts
from todeval.evals.metrics.goal_tracking.confirmed_status import (
    confirmed_row,
    confirmed_status_counts,
    confirmed_status_report,
)
from todeval.evals.metrics.goal_tracking.costs import CostCounts
from todeval.evals.metrics.goal_tracking.dialogue_progress import (
    CurveCounts,
    progress_counts,
    progress_turns,
)
from todeval.evals.metrics.goal_tracking.goal_detection import (
    GoalKey,
    GoalMatcher,
    Similarity,
    detection_scores,
    goal_key,
    status_hits,
)
from todeval.evals.metrics.goal_tracking.goal_records import (
    GoalRecord,
    GoldTimeline,
    gold_goal_records,
    is_mentioned,
    mean_or_none,
    predicted_states_at_turns,
    ratio,
    round4,
)
from todeval.evals.metrics.goal_tracking.memory_state import (
    memory_state_counts,
    memory_state_report,
)
from todeval.evals.metrics.goal_tracking.metric_validity import ValidityCounts
from todeval.evals.metrics.goal_tracking.response_quality import (
    ResponseQualityCounts,
    response_quality_row,
)
from todeval.evals.metrics.goal_tracking.task_completion import (
    goal_counts,
    turns_to_completion_per_goal,
)
from todeval.evals.metrics.running import RunningMean

#: The per-dialogue figures whose plain means are the report's ``macro``.
PER_DIALOGUE = ("dgcr", "ntc", "goal_detection_f1", "status_accuracy", "memory_recall_accuracy")


class GoalTrackingTally:
    """``goal_tracking_report`` one dialogue at a time, so a run need not keep its gold.

    ``add`` keeps only counts and sums and returns the dialogue's row; ``report`` pools them.
    Latency percentiles come from a sketch (:class:`CostCounts`); all else is exact.
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
        self.n_dialogues = 0
        self.spans = RunningMean()
        self.gold_spans = RunningMean()
        self.curves = CurveCounts()
        self.costs = CostCounts()
        self.proactivity = ProactivityCounts()
        self.macro = {name: RunningMean() for name in PER_DIALOGUE}
        self.validity = ValidityCounts()
        self.quality = ResponseQualityCounts()
        self.confirmed: Counter[str] = Counter()

    def merge(self, other: GoalTrackingTally) -> None:
        """Add the dialogues ``other`` scored (a disjoint part of the corpus, which came later)."""
        _add(self.totals, **other.totals)
        self.n_dialogues += other.n_dialogues
        self.spans.merge(other.spans)
        self.gold_spans.merge(other.gold_spans)
        self.curves.merge(other.curves)
        self.costs.merge(other.costs)
        self.proactivity.merge(other.proactivity)
        for name, mean in other.macro.items():
            self.macro[name].merge(mean)
        self.validity.merge(other.validity)
        self.quality.merge(other.quality)
        self.confirmed.update(other.confirmed)

    def _matcher(
        self,
        goals: Sequence[GoalRecord],
        gold: AtodDialogue,
        timeline: GoldTimeline,
        given: Any = None,
    ) -> GoalMatcher:
        """Matching ``goals`` against ``gold`` at any turn, its timeline walked once for all.

        ``given``: the result's ``gold_matcher``, taken if it matches the same goals, gold and
        timeline as this tally would (its pairs depend on nothing else).
        """
        if (
            isinstance(given, GoalMatcher)
            and list(given.predicted) == list(goals)
            and given.gold is gold
            and given.timeline is timeline
            and (given.key, given.similar, given.threshold)
            == (self.key, self.similar, self.threshold)
        ):
            return given
        return GoalMatcher(
            goals, gold, key=self.key, similar=self.similar, threshold=self.threshold,
            timeline=timeline,
        )  # fmt: skip

    def add(self, result: GoalRecord) -> dict[str, Any]:
        """Score one dialogue's result; returns its row (figures and the ``counts`` behind them).

        ``result["gold_timeline"]``, if given, is the :class:`GoldTimeline` of its ``gold``;
        ``result["gold_matcher"]``, if given, may be the :class:`GoalMatcher` of both.
        """
        goals = list(result.get("goals") or [])
        completed, decided, blocked = goal_counts(goals)
        dialogue_spans = turns_to_completion_per_goal(goals)
        _add(self.totals, completed=completed, decided=decided, blocked=blocked)
        for span in dialogue_spans:
            self.spans.add(span)
        self.costs.extend(result.get("costs") or [])
        if result.get("proactivity_verdicts") is not None:
            self.proactivity.add(list(result["proactivity_verdicts"]))
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
            if isinstance(gold, AtodDialogue):  # walked once by whoever scored the result
                timeline = result.get("gold_timeline") or GoldTimeline.of(gold.turns)
            else:
                gold = AtodDialogue.model_validate(gold)
                timeline = GoldTimeline.of(gold.turns)
            gold_goals = gold_goal_records(gold, timeline)
            gold_completed, gold_decided, _ = goal_counts(gold_goals)
            for span in turns_to_completion_per_goal(gold_goals):
                self.gold_spans.add(span)
            matcher = self._matcher(goals, gold, timeline, result.get("gold_matcher"))
            queries = result.get("queries") or []
            found, confirmed = _gold_counts(goals, queries, gold, timeline.view(), matcher)
            self.confirmed += confirmed
            counts |= found
            _add(self.totals, gold_dialogues=1, gold_completed=gold_completed, **found)
            _add(self.totals, gold_decided=gold_decided)
            f1 = detection_scores(found["tp"], found["n_pred"], found["n_gold"])["f1"]
            row["goal_detection_f1"] = f1
            row["status_accuracy"] = ratio(found["status_correct"], found["tp"])
            row["memory_recall_accuracy"] = ratio(found["recall_correct"], found["recall_judged"])
            turns = list(result.get("turns") or [])
            if turns:  # matched again at each point, among the goals the tracker held then
                held = predicted_states_at_turns(turns, progress_turns(len(gold.turns), self.bins))
                pairs_at = {turn: matcher.at(turn, states) for turn, states in held.items()}
                curve = progress_counts(turns, gold.turns, pairs_at, self.bins, timeline, held)
                self.curves.add_counts(tuple(p for p, _, _ in curve), [c for _, _, c in curve])
        reason = (result.get("response_quality") or {}).get("reason")
        row["counts"] = counts
        self._add_row(row, str(reason) if reason else None)
        return _rounded(row)

    def _add_row(self, row: dict[str, Any], reason: str | None) -> None:
        """Count a dialogue's figures: unrounded, as the macro means and correlations take them."""
        self.n_dialogues += 1
        for name, mean in self.macro.items():
            if row[name] is not None:
                mean.add(row[name])
        self.validity.add(row)
        self.quality.add(row, reason)

    def report(self) -> dict[str, Any]:
        """The corpus figures so far (``goal_tracking_report``'s, without ``dialogues``)."""
        totals = self.totals
        detection = detection_scores(totals["tp"], totals["n_pred"], totals["n_gold"])
        summary = {
            "n_dialogues": self.n_dialogues,
            "n_gold_dialogues": totals["gold_dialogues"],
            "dgcr": round4(ratio(totals["completed"], totals["decided"])),
            "dgcr_gold": round4(ratio(totals["gold_completed"], totals["gold_decided"])),
            "n_decided_goals": totals["decided"],
            "n_blocked_goals": totals["blocked"],
            "ntc": round4(self.spans.value()),
            "ntc_gold": round4(self.gold_spans.value()),
            "n_completed_goals": self.spans.n,
            "goal_detection_precision": round4(detection["precision"]),
            "goal_detection_recall": round4(detection["recall"]),
            "goal_detection_f1": round4(detection["f1"]),
            "n_pred_goals": totals["n_pred"],
            "n_gold_goals": totals["n_gold"],
            "n_matched_goals": totals["tp"],
            "status_accuracy": round4(ratio(totals["status_correct"], totals["tp"])),
            "progress_curve": self.curves.report(),
            "memory_recall_accuracy": round4(
                ratio(totals["recall_correct"], totals["recall_judged"])
            ),
            "n_memory_queries": totals["recall_judged"],
            "proactivity_effectiveness": self.proactivity.report(),
        }
        macro = {name: round4(mean.value()) for name, mean in self.macro.items()}
        summary["response_quality"] = self.quality.report()
        summary["metric_validity"] = self.validity.report()
        state = {
            name[len("memory_") :]: n for name, n in totals.items() if name.startswith("memory_")
        }
        figures = summary | memory_state_report(state)
        figures |= confirmed_status_report(self.confirmed) | self.costs.report()
        return figures | {"macro": macro}


def _judged_share(verdicts: Sequence[bool | None] | None) -> float | None:
    """One dialogue's proactivity effectiveness (None without a judged action)."""
    judged = [v for v in verdicts or [] if v is not None]
    return ratio(sum(judged), len(judged))


def _rounded(row: dict[str, Any]) -> dict[str, Any]:
    keep = ("dialogue_id", "counts")
    return {name: value if name in keep else round4(value) for name, value in row.items()}


def _gold_counts(
    goals: Sequence[GoalRecord],
    queries: Iterable[GoalRecord],
    gold: AtodDialogue,
    final: Mapping[str, str],
    matcher: GoalMatcher,
) -> tuple[dict[str, int], Counter[str]]:
    """One dialogue's final-state detection, status and memory-recall counts; confirmed goals."""
    pairs = matcher.at(None)
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


def _add(totals: dict[str, int], **counts: int) -> None:
    for name, count in counts.items():
        totals[name] += count
