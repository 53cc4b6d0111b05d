"""The GSR report shows each teacher's calibration against human verdicts (paper 004's loop).

The summary's ``calibration`` is built here by the functions ``todeval gsr`` uses
(:func:`teacher_calibration`, :func:`applied_calibration`), so the report reads their shape.
"""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any

from todeval.evals.metrics.goal_success.calibration import applied_calibration, teacher_calibration
from todeval.evals.report.goal_success import goal_success_section

A, B = "openai:teacher-a", "local:signals"


class Tables(HTMLParser):
    """Every table's rows as cell texts, and the headings' texts."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: list[list[list[str]]] = []
        self.headings: list[str] = []
        self._cell: list[str] | None = None
        self._heading: list[str] | None = None
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag in ("td", "th") and self.tables:
            self._cell = []
        elif tag in ("h3", "h4"):
            self._heading = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self.tables:
            self.tables[-1][-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag in ("h3", "h4") and self._heading is not None:
            self.headings.append("".join(self._heading).strip())
            self._heading = None

    def handle_data(self, data: str) -> None:
        for part in (self._cell, self._heading):
            if part is not None:
                part.append(data)

    def table_with(self, header: str) -> dict[str, dict[str, str]]:
        """The first table whose header row has ``header``: its rows by first cell, by header."""
        for table in self.tables:
            if table and header in table[0]:
                return {row[0]: dict(zip(table[0], row, strict=True)) for row in table[1:]}
        raise AssertionError(f"no table with a {header!r} column")


def _turn(a: tuple[str, str | None], b: tuple[str, str | None], voted: str) -> dict[str, Any]:
    labels = [{"judge": j, "quality": q, "rcof": r} for j, (q, r) in ((A, a), (B, b))]
    return {"teachers": labels, "quality": voted, "decided_by": "vote"}


#: Four turns people judged; teacher B fails the two audited successes and misses E3.
TURNS = [
    _turn(("failure", "E3"), ("failure", "E1"), "failure"),
    _turn(("success", None), ("failure", "E5"), "success"),
    _turn(("success", None), ("failure", "E5"), "success"),
    _turn(("success", None), ("success", None), "success"),
]
VERDICTS = [{"quality": "failure", "rcof": "E3"}] + [{"quality": "success"}] * 3
AUDITED = [False, True, True, True]


def _summary() -> dict[str, Any]:
    current = teacher_calibration(TURNS, VERDICTS, AUDITED)
    assert current is not None
    applied = applied_calibration(current, TURNS, "earlier/calibration.json")
    block = {"this_run": current, "file": "run/calibration.json", "applied": applied}
    return {"gsr": 0.5, "calibration": block}


def test_the_report_shows_each_teachers_calibration_and_the_votes_on_flagged_ones() -> None:
    page = Tables(goal_success_section(_summary(), []).body)
    assert "Teacher calibration" in page.headings
    rows = page.table_with("escalated agreement")
    assert rows[A]["agreement"] == "100.0%" and rows[B]["agreement"] == "25.0%"
    assert (rows[B]["audited"], rows[B]["audited agreement"]) == ("3", "33.3%")
    assert (rows[B]["escalated"], rows[B]["escalated agreement"]) == ("1", "0.0%")
    assert rows[B]["on E3"] == "0.0% (0/1)" and rows[B]["on success"] == "33.3% (1/3)"
    assert rows[A]["on E3"] == "100.0% (1/1)"
    assert rows[A]["flagged"] == "no" and rows[B]["flagged"].startswith("yes: people overruled")

    earlier = page.table_with("earlier agreement")
    assert earlier[B]["flagged"] == "yes" and earlier[B]["earlier agreement"] == "25.0%"
    assert earlier[A]["on success"] == "100.0% (3/3)"
    # Turns 1 and 4 have both teachers agreeing with the vote, and B is flagged; 2 and 3 had
    # one agreeing teacher (no majority to lean on).
    body = goal_success_section(_summary(), []).body
    assert "relied on a flagged teacher (fewer than two agreeing teachers without it): 2" in body
    assert "earlier/calibration.json" in body


def test_no_calibration_no_table_and_a_run_without_verdicts_says_so() -> None:
    plain = Tables(goal_success_section({"gsr": 0.5}, []).body)
    assert "Teacher calibration" not in plain.headings
    assert all("escalated agreement" not in table[0] for table in plain.tables if table)
    empty = {"gsr": 0.5, "calibration": {"this_run": None, "file": None, "applied": None}}
    body = goal_success_section(empty, []).body
    assert "Teacher calibration" in Tables(body).headings
    assert "No human verdicts yet" in body and "escalated agreement" not in body
