"""What one subsystem's part of ``todeval evaluate`` keeps while records stream in.

Each subsystem gives the evaluation a :class:`SuiteTally` (its registry entry's ``tally``):
``add`` turns the record's suite output into the suite's part of the ``results.jsonl`` line and
pools it; ``summary`` is the suite's section of ``summary.json``, as its own command writes it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from todeval.evals.memory_schema import MemoryUnit
from todeval.evals.record_views import EvaluationRecord
from todeval.evals.results import ThreadResult

Units = Callable[[str], Sequence[MemoryUnit]]
"""An individual's stored memory units (the memory suite's bank)."""


def no_units(individual_id: str) -> Sequence[MemoryUnit]:
    """No memory bank: every individual has no stored units."""
    return []


@dataclass(frozen=True)
class TallySettings:
    """What a run tells its suites' tallies (schema-named goals; an individual's memory units)."""

    named_by_schema: bool = True
    units: Units = no_units


class SuiteTally(Protocol):
    """One subsystem's running tally inside the evaluation.

    A tally may also have ``settled(part) -> bool``: whether a part ``add`` returned is already
    what ``results.jsonl``'s dump makes of it (``EvaluationLine``'s ``dict[str, Any]`` fields:
    each value dumped as ``Any``), such as a line model's ``row()``; the line then takes it as
    it is instead of validating and dumping it again (an SGD line's goals and turns are most
    of the parent process's dumping).
    """

    def see(self, record: EvaluationRecord) -> None:
        """Every readable record passes here, whether or not the suite ran on it."""
        ...

    def add(self, record: EvaluationRecord, result: ThreadResult) -> Any:
        """The suite's part of the record's line, pooled into the suite's figures."""
        ...

    @property
    def count(self) -> int:
        """How many records the suite has scored so far."""
        ...

    def summary(self, judges: Mapping[str, Any]) -> dict[str, Any]:
        """The suite's section of ``summary.json``."""
        ...
