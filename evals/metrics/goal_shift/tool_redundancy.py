"""Tool-Call Redundancy Ratio (paper 002, Appendix B.1), from tool-call records.

TCRR counts a call redundant if the same tool with the same normalised arguments was called in
any of the previous 3 assistant turns of the same conversation (window), or if it is the third
or later identical call within one assistant turn (batch threshold 2). An assistant turn is one
assistant message, as in AgentChangeBench's code. :func:`pooled_tool_call_redundancy`
reproduces that code's computation, which pools every conversation's calls by turn number.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from todeval.evals.metrics.goal_shift.tool_use import ToolCallRecord

TCRR_WINDOW = 3
"""Previous assistant turns searched for an identical call (Appendix B.1)."""

TCRR_BATCH_THRESHOLD = 2
"""Identical calls allowed within one assistant turn (Appendix B.1)."""


@dataclass(frozen=True)
class Redundancy:
    """Redundant calls by kind over a set of calls."""

    calls: int
    window: int
    batch: int

    @property
    def redundant(self) -> int:
        """Window plus batch redundant calls."""
        return self.window + self.batch

    @property
    def tcrr(self) -> float | None:
        """Redundant calls / calls; None without calls."""
        return self.redundant / self.calls if self.calls else None

    @property
    def tcrr_window(self) -> float | None:
        """Window-redundant calls / calls."""
        return self.window / self.calls if self.calls else None

    @property
    def tcrr_batch(self) -> float | None:
        """Batch-redundant calls / calls."""
        return self.batch / self.calls if self.calls else None

    def __add__(self, other: Redundancy) -> Redundancy:
        return Redundancy(
            self.calls + other.calls, self.window + other.window, self.batch + other.batch
        )


def redundant_calls(
    records: Sequence[ToolCallRecord],
    *,
    window: int = TCRR_WINDOW,
    batch_threshold: int = TCRR_BATCH_THRESHOLD,
) -> list[str | None]:
    """Per call: ``"window"``, ``"batch"`` or None (not redundant).

    A call is window-redundant when its identity occurs in any of the previous ``window``
    assistant turns; otherwise batch-redundant when more than ``batch_threshold`` identical
    calls precede or are it in its own turn. Each call is counted once, window first.
    """
    by_turn: dict[int, set[str]] = defaultdict(set)
    for record in records:
        by_turn[record["assistant_turn"]].add(record["identity"])
    seen_in_turn: Counter[tuple[int, str]] = Counter()
    kinds: list[str | None] = []
    for record in records:
        turn, identity = record["assistant_turn"], record["identity"]
        seen_in_turn[(turn, identity)] += 1
        earlier = any(identity in by_turn.get(t, ()) for t in range(max(1, turn - window), turn))
        excess = seen_in_turn[(turn, identity)] > batch_threshold
        kinds.append("window" if earlier else "batch" if excess else None)
    return kinds


def tool_call_redundancy(records: Sequence[ToolCallRecord]) -> Redundancy:
    """TCRR's counts for one conversation's assistant calls (each call counted once)."""
    own = [record for record in records if record["role"] == "assistant"]
    kinds = redundant_calls(own)
    return Redundancy(len(own), kinds.count("window"), kinds.count("batch"))


def pooled_tool_call_redundancy(conversations: Iterable[Sequence[ToolCallRecord]]) -> Redundancy:
    """AgentChangeBench's TCRR: every conversation's calls pooled and grouped by turn number.

    Calls of different conversations at the same assistant turn index are compared with each
    other, window and batch excess are tallied independently (a call may count in both), and
    user-side calls are included. Only for comparison with published numbers.
    """
    pooled = [record for records in conversations for record in records]
    by_turn: dict[int, list[str]] = defaultdict(list)
    for record in pooled:
        by_turn[record["assistant_turn"]].append(record["identity"])
    window = batch = 0
    for turn, identities in by_turn.items():
        previous = {i for t in range(max(1, turn - TCRR_WINDOW), turn) for i in by_turn.get(t, ())}
        window += sum(1 for identity in identities if identity in previous)
        batch += sum(
            count - TCRR_BATCH_THRESHOLD
            for count in Counter(identities).values()
            if count > TCRR_BATCH_THRESHOLD
        )
    return Redundancy(len(pooled), window, batch)
