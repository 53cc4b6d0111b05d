"""The report in bounded memory (issue 32 item 2): drill-downs one at a time, the page in pieces."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.unit.test_report import corpus, summary
from todeval.evals.metrics.running import PackedMap, pack
from todeval.evals.report import Section, goal_success_section, render_report, write_report
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


def test_the_page_written_in_pieces_is_the_rendered_page(tmp_path: Path) -> None:
    goals, dialogues = corpus()
    sections = [goal_success_section(summary(), goals, dialogues)]
    path = tmp_path / "out" / "report.html"
    write_report(path, "todeval", sections, meta={"input": "x.jsonl"})
    rendered = render_report("todeval", sections, meta={"input": "x.jsonl"})
    assert path.read_text(encoding="utf-8") == rendered and rendered.endswith("</html>\n")
    assert [p.name for p in path.parent.iterdir()] == ["report.html"]  # no temporary left


def test_a_bad_section_id_writes_nothing(tmp_path: Path) -> None:
    bad = Section("report-overview", "Clash", [], goal_success_section(summary(), []).body)
    with pytest.raises(ValueError, match="reserved"):
        write_report(tmp_path / "out" / "report.html", "t", [bad])
    assert not (tmp_path / "out").exists()
