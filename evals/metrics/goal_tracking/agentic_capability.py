"""Agentic capability metrics (ATOD, paper 000, Section 6.2): memory recall and proactivity.

Memory Recall Accuracy scores the tracker's memory lookups against the gold goals; Proactivity
Effectiveness the share of its proactive actions an LLM judge found appropriate and beneficial.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from todeval.evals.metrics.goal_tracking.goal_records import GoalRecord, ratio, round4


def memory_recall_accuracy(queries: Iterable[GoalRecord]) -> float | None:
    """Memory Recall Accuracy: the share of memory lookups that returned the right goal (6.2).

    A query is the tracker's existence check for an utterance (Stage 1): ``retrieved`` is the
    gold goal its retrieved entry matches (``None``: nothing retrieved; an entry matching no
    gold goal is any non-gold id), ``expected`` the gold goals memory should already hold (a
    set, one id as a string, or ``None``: no ground truth, skipped). It matches when it is one
    of the expected goals, or nothing when nothing is expected. Only identity is checked.
    """
    correct, judged = recall_counts(queries)
    return ratio(correct, judged)


def proactivity_effectiveness(verdicts: Sequence[bool | None] | None = None) -> dict[str, Any]:
    """Proactivity Effectiveness: the share of proactive actions judged apt and useful (6.2).

    Takes an LLM judge's verdicts (``None`` when no judge ran), so without them there is no
    figure: ``value`` is ``None`` with the ``reason``.

    Raises:
        ValueError: A verdict is neither a bool nor ``None``.
    """
    if verdicts is None:
        return ProactivityCounts().report()
    counts = ProactivityCounts()
    counts.add(verdicts)
    return counts.report()


@dataclass
class ProactivityCounts:
    """:func:`proactivity_effectiveness` over many dialogues' verdicts, as counts."""

    judged_runs: int = 0
    """Dialogues whose actions a judge was given (0: no judge ran, the figure has no value)."""
    n_actions: int = 0
    n_judged: int = 0
    n_apt: int = 0

    def add(self, verdicts: Sequence[bool | None]) -> None:
        """Count one dialogue's verdicts.

        Raises:
            ValueError: A verdict is neither a bool nor ``None``.
        """
        if any(v is not None and not isinstance(v, bool) for v in verdicts):
            raise ValueError(f"verdicts must be True, False or None, got {list(verdicts)}")
        self.judged_runs += 1
        self.n_actions += len(verdicts)
        self.n_judged += sum(v is not None for v in verdicts)
        self.n_apt += sum(v is True for v in verdicts)

    def merge(self, other: ProactivityCounts) -> None:
        """Add the verdicts ``other`` counted."""
        self.judged_runs += other.judged_runs
        self.n_actions += other.n_actions
        self.n_judged += other.n_judged
        self.n_apt += other.n_apt

    def report(self) -> dict[str, Any]:
        """:func:`proactivity_effectiveness` of the verdicts counted."""
        if not self.judged_runs:
            return {
                "value": None,
                "reason": "needs LLM-judge verdicts on the proactive actions (goal or status "
                "changes made without an explicit user prompt); none were given",
                "n_actions": 0,
                "n_judged": 0,
            }
        reason = None
        if not self.n_actions:
            reason = "no proactive action to judge"
        elif not self.n_judged:
            reason = f"the judge gave no verdict on any of the {self.n_actions} proactive actions"
        return {
            "value": round4(ratio(self.n_apt, self.n_judged)),
            "reason": reason,
            "n_actions": self.n_actions,
            "n_judged": self.n_judged,
        }


def recall_counts(queries: Iterable[GoalRecord]) -> tuple[int, int]:
    """Correct and judged memory queries (see :func:`memory_recall_accuracy`)."""
    correct = judged = 0
    for query in queries:
        expected = expected_goals(query)
        if expected is None:
            continue
        retrieved = query.get("retrieved")
        judged += 1
        correct += not expected if retrieved is None else retrieved in expected
    return correct, judged


def expected_goals(query: GoalRecord) -> set[str] | None:
    """The gold goals a memory query should return (a string is one id); None: no ground truth."""
    expected = query.get("expected")
    if expected is None:
        return None
    return {expected} if isinstance(expected, str) else set(expected)
