"""Memory (MAP / MS-TOD) inside ``todeval evaluate``: its part of each line and summary."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from todeval.evals.memory_schema import MemoryEvalRecord
from todeval.evals.metrics.memory.scores import memory_summary
from todeval.evals.metrics.memory.tally import item_line
from todeval.evals.metrics.suite_tally import TallySettings, Units
from todeval.evals.record_views import EvaluationRecord
from todeval.evals.results import ThreadResult


@dataclass
class MemorySuite:
    """Each memory item's line, scored against the user's stored units.

    Args:
        units: An individual's stored memory units.
    """

    units: Units
    lines: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def start(cls, settings: TallySettings) -> MemorySuite:
        """A new tally for one run, reading the run's memory banks."""
        return cls(settings.units)

    def see(self, record: EvaluationRecord) -> None:
        """Nothing to note about records memory did not run on."""

    def add(self, record: EvaluationRecord, result: ThreadResult) -> dict[str, Any]:
        """The item's line (as ``todeval memory eval`` writes it)."""
        assert record.memory is not None  # the graph runs memory only for memory items
        memory = record.memory
        eval_record = MemoryEvalRecord(
            eval_id=memory.item.eval_id, individual_id=memory.individual_id, item=memory.item
        )
        item = item_line(eval_record, result, self.units(memory.individual_id))
        self.lines.append(item)
        return item

    @property
    def count(self) -> int:
        """Items scored."""
        return len(self.lines)

    def summary(self, judges: Mapping[str, Any]) -> dict[str, Any]:
        """The memory command's summary."""
        return memory_summary(self.lines) | {"judges": dict(judges)}
