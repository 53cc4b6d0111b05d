"""The report in bounded memory (issue 32 item 2): drill-downs one at a time, the page in pieces."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from markupsafe import Markup

from tests.unit.test_report import corpus, summary
from todeval.evals.metrics.running import Packed, PackedMap, pack
from todeval.evals.report import (
    Section,
    goal_success_section,
    render_report,
    templating,
    write_report,
)
from todeval.evals.report.evaluation import RECORDS_ID, records_section
from todeval.evals.report.goal_success_drilldown import Drilldowns, failed_goals
from todeval.evals.report.page import anchor_id
from todeval.evals.report.templating import PIECES_JOINED, Rendered


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


class CountingGoals(Packed):
    """A :class:`Packed` that counts the goals it unpacks."""

    reads: int = 0

    def __iter__(self) -> Iterator[Any]:
        for goal in super().__iter__():
            self.reads += 1
            yield goal

    def __getitem__(self, index: Any) -> Any:
        self.reads += 1
        return super().__getitem__(index)


def test_packed_goals_are_read_one_at_a_time_and_draw_the_same_section() -> None:
    # Unpacked together, SGD dev's 500 failed goals set the run's peak memory.
    goals, dialogues = corpus()
    packed = CountingGoals()
    for goal in goals:
        packed.append(goal)
    assert packed[1] == goals[1] and packed[1:3] == goals[1:3]
    packed.reads = 0
    found = failed_goals(packed, dialogues, cap=500)
    assert packed.reads == len(goals)  # one pass for the table: no goal is kept
    drills = found["drilldowns"]
    first = next(iter(drills))
    assert packed.reads == len(goals) + len(first["goals"])  # a drill-down reads its own
    assert goal_success_section(summary(), packed, dialogues).body == (
        goal_success_section(summary(), goals, dialogues).body
    )


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


def test_long_sections_are_drawn_while_the_page_is_written(tmp_path: Path) -> None:
    """Building a section reads no dialogue; writing the page reads each once, in pieces."""
    goals, dialogues = corpus()
    packed = CountingMap({did: pack(view) for did, view in dialogues.items()})
    lines: list[dict[str, Any]] = [
        {"record_id": did, "kind": "dialogue", "status": "done", "suites": ["goal_success"],
         "error": None, "metrics": {}}
        for did in dialogues
    ]  # fmt: skip
    records = CountingMap({"shown": pack(lines)})
    sections = [
        goal_success_section(summary(), goals, packed),
        records_section(LazyLines(records), packed, total=len(lines)),
    ]
    built = packed.reads  # the failed-goal table's first failed turns
    assert records.reads == 1  # the records table's figures
    pieces = list(sections[0].pieces())
    assert len(pieces) > 10 and packed.reads > built  # drawn now, not when built
    drawn = packed.reads
    write_report(tmp_path / "report.html", "todeval", sections)
    text = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert records.reads == 2  # once more, for the drill-downs, as the page reaches them
    assert packed.reads - drawn == (drawn - built) + len(dialogues)  # each read when drawn
    assert all(f'id="{anchor_id(RECORDS_ID, did)}"' in text for did in dialogues)


class LazyLines:
    """Lines read from a packed store each time they are iterated (as a run's tally keeps them)."""

    def __init__(self, store: CountingMap) -> None:
        self.store = store

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.store["shown"])


def test_a_body_in_pieces_is_its_template_pieces_joined_a_few_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Fewer pieces for the page to pass on, the same text, even past a run of empty pieces."""
    raw = ["<p>", *[""] * (2 * PIECES_JOINED), "a", "</p>", *map(str, range(3 * PIECES_JOINED))]
    monkeypatch.setattr(templating, "render_pieces", lambda template, **data: iter(raw))
    pieces = list(Rendered("any.html.j2").pieces())
    assert "".join(pieces) == "".join(raw)
    assert len(pieces) == -(-len(raw) // PIECES_JOINED)
    assert all(isinstance(piece, Markup) for piece in pieces)
