"""The goal-success drill-downs read packed dialogues one at a time (issue 32 item 2)."""

from __future__ import annotations

from typing import Any

from tests.unit.test_report import corpus, summary
from todeval.evals.metrics.running import PackedMap, pack
from todeval.evals.report import goal_success_section
from todeval.evals.report.goal_success_drilldown import Drilldowns, failed_goals


class CountingMap(PackedMap):
    """A :class:`PackedMap` that counts its reads."""

    def __init__(self, blobs: dict[str, bytes]) -> None:
        super().__init__(blobs)
        self.reads = 0

    def __getitem__(self, key: str) -> Any:
        self.reads += 1
        return super().__getitem__(key)


def test_packed_dialogues_draw_the_same_section_as_unpacked_ones() -> None:
    goals, dialogues = corpus()
    packed = PackedMap({did: pack(view) for did, view in dialogues.items()})
    assert dict(packed) == dialogues and len(packed) == len(dialogues)
    assert goal_success_section(summary(), goals, packed).body == (
        goal_success_section(summary(), goals, dialogues).body
    )


def test_a_drilldown_is_built_only_when_it_is_reached() -> None:
    goals, dialogues = corpus()
    packed = CountingMap({did: pack(view) for did, view in dialogues.items()})
    found = failed_goals(goals, packed, cap=500)
    drills = found["drilldowns"]
    assert isinstance(drills, Drilldowns) and len(drills) > 0 and bool(drills)
    before = packed.reads  # the failed-goal table's rows read theirs
    first = next(iter(drills))
    assert packed.reads == before + 1 and first["has_text"]
    assert len(list(drills)) == len(drills) and packed.reads == before + 1 + len(drills)
    assert not failed_goals([], packed, cap=500)["drilldowns"]
