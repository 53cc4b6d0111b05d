"""Goal tracking over a corpus, as results stream in: the tracker's goals against gold.

:func:`scored_result` shapes a tracker thread's output for
:class:`~evals.metrics.goal_tracking.report.GoalTrackingTally`; :func:`goals_line` is its
``goals.jsonl`` line. No judge is called here (``nodes/goal_tracking/judging.py`` judges).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from todeval.evals.goal_tracking_schema import AtodDialogue
from todeval.evals.metrics.goal_tracking.goal_detection import GoalMatcher
from todeval.evals.metrics.goal_tracking.goal_records import (
    GoldTimeline,
    final_statuses,
    is_mentioned,
)
from todeval.evals.metrics.goal_tracking.memory_state import gold_memory_state
from todeval.evals.metrics.goal_tracking.report import GoalTrackingTally
from todeval.evals.metrics.running import LISTED, Capped
from todeval.evals.results import ThreadResult, TrackedDialogueLine, usable_result
from todeval.evals.schema import RecordError

JUDGED_KEYS = ("proactivity_verdicts", "proactive_actions", "response_quality")
"""What the graph's judging node adds to a tracker's output; read as they are."""

REPORT_TIMELINES = 40
"""Dialogues whose goal timelines the HTML report draws."""

BY_CLASS_FIGURES = (
    "n_dialogues", "goal_detection_f1", "status_accuracy", "dgcr", "ntc",
    "memory_recall_accuracy", "latency_ms_p50", "prompt_tokens_per_turn",
)  # fmt: skip
"""The figures given per complexity class (ATOD's Table 3 layout: one column per class)."""


def scored_result(dialogue: AtodDialogue, result: ThreadResult) -> dict[str, Any]:
    """The tracker's output in the shape ``goal_tracking_report`` reads, queries mapped to gold."""
    assert result.output is not None
    goals = [
        {
            "goal_id": g["id"],
            "service": g["domain"],
            "intent": g["intent"],
            "description": g["description"],
            "slots": g["slots"],
            "status": g["status"],
            "status_history": g["status_history"],
            "dependencies": g["dependencies"],
            "parent_id": g.get("parent_id"),
        }
        for g in result.output["goals"]
    ]
    gold = dialogue if dialogue.goal_list else None
    timeline = GoldTimeline.of(gold.turns) if gold is not None else None
    # refuses goals that share an id
    matcher = GoalMatcher(goals, gold, timeline=timeline) if gold is not None else None
    return {
        "dialogue_id": dialogue.dialogue_id,
        "gold": gold,
        "gold_timeline": timeline,  # walked once, for the figures too
        "gold_matcher": matcher,  # its first mentions and pairs worked out once, too
        "goals": goals,
        "turns": result.output["turns"],
        "costs": result.output["costs"],
        "queries": _gold_queries(result.output["queries"], goals, gold, timeline, matcher),
    } | {key: result.output[key] for key in JUDGED_KEYS if key in result.output}


def _gold_queries(
    queries: Iterable[dict[str, Any]],
    goals: list[dict[str, Any]],
    gold: AtodDialogue | None,
    timeline: GoldTimeline | None,
    matcher: GoalMatcher | None = None,
) -> list[dict[str, Any]]:
    """Each existence check as ``{"retrieved": gold id | other | None, "expected": gold ids}``.

    Memory should return the gold goals changed at the utterance that were mentioned before
    (none: the empty set); utterances whose gold changes nothing are not judged.
    """
    if gold is None:
        return []
    timeline = timeline or GoldTimeline.of(gold.turns)
    if matcher is None:
        matcher = GoalMatcher(goals, gold, timeline=timeline)  # refuses goals that share an id
    queries = list(queries)
    retrieving = any(query["retrieved"] is not None for query in queries)
    pairs = dict(matcher.at()) if retrieving else {}  # matched only when a query needs it
    states = timeline.states
    expected_at: dict[int, set[str]] = {}
    for turn, before in zip(gold.turns, [{}, *states[:-1]], strict=True):
        concerned = {change.goal_id for change in turn.goal_status_changes}
        if concerned:
            expected_at[turn.turn_id] = {g for g in concerned if is_mentioned(before.get(g))}
    mapped = []
    for query in queries:
        retrieved = query["retrieved"]
        as_gold = None if retrieved is None else pairs.get(retrieved, f"unmatched:{retrieved}")
        gold_state = (
            None if retrieved is None else gold_memory_state(gold, str(as_gold), query["turn"])
        )
        mapped.append(
            {
                "retrieved": as_gold,
                "expected": expected_at.get(query["turn"]),
                "held": query.get("held"),
                "gold_state": gold_state,
            }
        )
    return mapped


def goals_line(result: dict[str, Any]) -> dict[str, Any]:
    """One goals.jsonl line: the tracker's goals and per-utterance states, gold final statuses."""
    gold: AtodDialogue | None = result["gold"]
    timeline: GoldTimeline | None = result.get("gold_timeline")
    final = None
    if gold is not None:  # from the timeline scoring walked, if it is there
        final = gold.final_statuses() if timeline is None else final_statuses(gold, timeline.states)
    return TrackedDialogueLine(
        dialogue_id=result["dialogue_id"],
        goals=result["goals"],
        turns=result["turns"],
        gold=final,
        **(
            {"proactive_actions": result["proactive_actions"]}
            if "proactive_actions" in result
            else {}
        ),
    ).row()


class TrackedCorpusTally:
    """A goal-tracking run: each dialogue scored against its gold, the first lines kept."""

    def __init__(self, named_by_schema: bool = True) -> None:
        self.named_by_schema = named_by_schema
        self.figures = GoalTrackingTally()
        self.shown: list[dict[str, Any]] = []  # goal lines the report draws as timelines
        self.skipped: Capped[dict[str, Any]] = Capped(LISTED)
        self.failed: Capped[dict[str, Any]] = Capped(LISTED)
        self.utterances = self.goals = 0
        self.incomparable = 0
        """Dialogues whose gold names goals by service while the tracker had no schema."""
        self.by_class: dict[str, GoalTrackingTally] = {}
        """The same figures per ``complexity_class`` of the gold (synthetic ATOD sets)."""

    def add(
        self, record: AtodDialogue | RecordError, result: ThreadResult | None
    ) -> list[dict[str, Any]]:
        """Score one dialogue; return its goals.jsonl line (none when skipped or failed)."""
        usable = usable_result(record, result, skipped=self.skipped, failed=self.failed)
        if usable is None:
            return []
        atod, finished, _ = usable
        line, _ = self.add_scored(self.judged(atod, finished), atod.complexity_class)
        return [line]

    def judged(self, atod: AtodDialogue, result: ThreadResult) -> dict[str, Any]:
        """The dialogue's scored result, with the verdicts its thread returned."""
        return scored_result(atod, result)

    def add_scored(
        self, scored: dict[str, Any], complexity_class: str | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Tally a scored result (and its complexity class's); its line and its figures row.

        Gold naming goals by service cannot match goals named without a schema (F1 would read
        0), so such a dialogue is scored without gold and counted in ``incomparable``.
        """
        if not self.named_by_schema and _named_by_service(scored["gold"]):
            scored = scored | {"gold": None, "queries": []}
            self.incomparable += 1
        row = self.figures.add(scored)
        if complexity_class:
            self.by_class.setdefault(complexity_class, GoalTrackingTally()).add(scored)
        line = goals_line(scored)
        self.utterances += len(scored["turns"])
        self.goals += len(scored["goals"])
        if len(self.shown) <= REPORT_TIMELINES:  # one more than drawn: the report says "more"
            self.shown.append(line)
        return line, row

    def summary(self, judges: dict[str, Any]) -> dict[str, Any]:
        """The figures of summary.json (the caller adds run details)."""
        report = self.figures.report()  # per-dialogue rows are in goals.jsonl
        return report | {
            "counts": {
                "dialogues": report["n_dialogues"],
                "utterances": self.utterances,
                "goals": self.goals,
                "skipped_records": self.skipped.total,
                "failed_dialogues": self.failed.total,
            },
            "judges": judges,
            "by_complexity_class": self.class_figures(),
            "gold_not_comparable": self.incomparable,
            "figures_note": (
                f"goal detection F1, status accuracy and memory recall are n/a for "
                f"{self.incomparable} dialogues: their gold names goals by service and intent, "
                "and the tracker had no schema to name them so (pass --schema)"
                if self.incomparable
                else None
            ),
            "skipped": self.skipped.items,
            "failed": self.failed.items,
        }

    def class_figures(self) -> dict[str, dict[str, Any]] | None:
        """:data:`BY_CLASS_FIGURES` per complexity class; None when no record has a class."""
        if not self.by_class:
            return None
        figures = {}
        for name, tally in sorted(self.by_class.items()):
            report = tally.report()
            figures[name] = {key: report.get(key) for key in BY_CLASS_FIGURES}
        return figures


def _named_by_service(gold: AtodDialogue | None) -> bool:
    """Gold whose goals are named by service (SGD's), which schema-free goals cannot match."""
    return gold is not None and any(goal.domain for goal in gold.goal_list)
