"""The static HTML report: page model, SVG bar charts and the Goal Success Rate section."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from markupsafe import Markup

from todeval.evals.report import (
    MISSING,
    Section,
    Series,
    anchor_id,
    bar_chart,
    goal_success_section,
    render_report,
    table,
    write_report,
)

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}
NASTY_ID = "d\"1'><script>alert(1)</script> &amp;"
NASTY_MSG = '<script>alert("pwned")</script> where is "my" <b>payslip</b>?'


class Page(HTMLParser):
    """Parses a page, checking that every tag is closed in order; collects ids, links, tags."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.ids: list[str] = []
        self.hrefs: list[str] = []
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._record(tag, attrs)
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._record(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:]}")
        else:
            self.stack.pop()

    def _record(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        self.tags.append((tag, found))
        if found.get("id"):
            self.ids.append(str(found["id"]))
        if tag == "a" and found.get("href"):
            self.hrefs.append(str(found["href"]))


def turn(number: int, quality: str | None, rcof: str | None = None, **extra: Any) -> dict[str, Any]:
    teachers = [
        {"judge": "local:signals", "quality": quality, "rcof": rcof, "rationale": "user rephrased"},
        {"judge": "openai:gpt-4o-mini", "quality": quality, "rcof": rcof, "rationale": "<i>ok</i>"},
    ]
    return {
        "turn_number": number,
        "quality": quality,
        "rcof": rcof,
        "ambiguous": extra.get("ambiguous", False),
        "decided_by": extra.get("decided_by", "vote"),
        "teachers": teachers,
    }


def goal(dialogue_id: str, index: int, turns: list[dict[str, Any]]) -> dict[str, Any]:
    qualities = [t["quality"] for t in turns]
    success = False if "failure" in qualities else (None if None in qualities else True)
    first_failed = next((t for t in turns if t["quality"] == "failure"), None)
    return {
        "dialogue_id": dialogue_id,
        "goal_index": index,
        "start_turn": turns[0]["turn_number"],
        "end_turn": turns[-1]["turn_number"],
        "n_turns": len(turns),
        "success": success,
        "rcof": first_failed["rcof"] if first_failed else None,
        "fractional_credit": qualities.count("success") / len(turns),
        "last_turn_success": qualities[-1] == "success",
        "pending_review": None in qualities,
        "turns": turns,
    }


def dialogue(dialogue_id: str, messages: list[str]) -> dict[str, Any]:
    turns = [
        {
            "turn_number": i,
            "user_msg": msg,
            "response": f"answer {i}",
            "source_names": ["HR <Policy>"],
            "source_snippets": ["snippet & more"],
        }
        for i, msg in enumerate(messages, start=1)
    ]
    return {"dialogue_id": dialogue_id, "turns": turns}


def summary(**overrides: Any) -> dict[str, Any]:
    agreement = {
        "n_turns": 6,
        "teachers": [
            {
                "index": 0,
                "judge": "local:signals",
                "quality": {"accuracy": 0.8, "kappa": 0.5, "n": 6},
                "rcof": {"accuracy": 0.5, "kappa": -0.2, "n": 2, "coverage": 1.0},
            }
        ],
        "vote": {
            "quality": {"accuracy": 0.9, "kappa": 0.6, "n": 6},
            "rcof": {"accuracy": None, "kappa": None, "n": 0, "coverage": 0.0},
        },
    }
    base: dict[str, Any] = {
        "gsr": 0.5,
        "gsr_single_turn": 0.25,
        "gsr_multi_turn": 0.75,
        "n_goals": 4,
        "n_single_turn_goals": 2,
        "n_multi_turn_goals": 2,
        "undecided_goals": 1,
        "failed_goals": 2,
        "gsr_by_length": {
            "1": {"n": 2, "gsr": 0.5},
            "2": {"n": 2, "gsr": 1.0},
            "3": {"n": 0, "gsr": None},
            "4+": {"n": 0, "gsr": None},
        },
        "fractional_credit": 0.7,
        "last_turn_success_rate": 0.6,
        "rcof": {f"E{i}": 0 for i in range(1, 8)} | {"E1": 1, "E3": 2},
        "rcof_share": {f"E{i}": 0.0 for i in range(1, 8)} | {"E1": 1 / 3, "E3": 2 / 3},
        "rcof_unattributed": 0,
        "ambiguous": 1,
        "ambiguous_share": 0.125,
        "pending_review": 1,
        "human_verdicts": 0,
        "teacher_kappa": {
            "quality": {"fleiss_kappa": 0.61, "n_turns": 8},
            "outcome": {"fleiss_kappa": None, "n_turns": 0},
        },
        "gold_agreement": agreement,
        "human_agreement": None,
        "judges": {"segmenter": "local:learned", "teachers": ["local:signals", "openai:x"]},
        "counts": {"dialogues": 2, "turns": 8, "goals": 4, "skipped_records": 1},
        "skipped": [
            {"file": "in.jsonl", "line": 3, "dialogue_id": "<bad>", "field": "t", "message": "x"}
        ],
    }
    return base | overrides


def corpus() -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    goals = [
        goal(NASTY_ID, 0, [turn(1, "success"), turn(2, "failure", "E3")]),
        goal(NASTY_ID, 1, [turn(3, "success")]),
        goal("plain-2", 0, [turn(1, "failure", "E1", ambiguous=True, decided_by="human")]),
        goal("plain-2", 1, [turn(2, None, decided_by=None)]),
    ]
    dialogues = {
        NASTY_ID: dialogue(NASTY_ID, ["hi", NASTY_MSG, "thanks"]),
        "plain-2": dialogue("plain-2", ["book a room", "for two"]),
    }
    return goals, dialogues


def overview_of(html: str) -> str:
    start = html.index('id="report-overview"')
    return html[start : html.index('id="report-contents"')]


def test_page_parses_with_balanced_tags_and_unique_ids(tmp_path: Path) -> None:
    goals, dialogues = corpus()
    other = Section("memory", "Memory", [("recall@5", "0.74")], table(["memory"], [["body"]]))
    path = tmp_path / "out" / "report.html"
    write_report(path, "todeval", [goal_success_section(summary(), goals, dialogues), other])
    page = Page(path.read_text(encoding="utf-8"))
    assert page.errors == [] and page.stack == []
    assert len(page.ids) == len(set(page.ids))
    tags = {tag for tag, _ in page.tags}
    assert {"svg", "rect", "table", "details"} <= tags and "script" not in tags


def test_overview_lists_every_sections_headline_figures_first() -> None:
    gsr = goal_success_section(summary(), [])
    other = Section("memory", "Memory <m>", [("recall@5", "0.74"), ("dGCR", MISSING)], Markup())
    html = render_report("run", [gsr, other], meta={"input": "dialogues.jsonl"})
    overview = overview_of(html)
    assert html.index(overview) < html.index('<section id="goal-success"')
    for label, value in [*gsr.overview, *other.overview]:
        assert f">{value}<" in overview and label.replace("'", "&#39;") in overview
    assert ("GSR", "50.0%") in gsr.overview and ("Fleiss' κ (quality)", "0.61") in gsr.overview
    assert "Memory &lt;m&gt;" in overview
    assert "<td>dialogues.jsonl</td>" in html


def test_user_text_and_dialogue_ids_are_escaped() -> None:
    goals, dialogues = corpus()
    html = render_report("t", [goal_success_section(summary(), goals, dialogues)])
    page = Page(html)
    assert "script" not in {tag for tag, _ in page.tags} and "<b>payslip" not in html
    assert "&lt;script&gt;alert(&#34;pwned&#34;)&lt;/script&gt;" in html
    assert "d&#34;1&#39;&gt;&lt;script&gt;" in html
    assert "&lt;i&gt;ok&lt;/i&gt;" in html and "HR &lt;Policy&gt;" in html
    assert all(re.fullmatch(r"[A-Za-z][\w-]*", i) for i in page.ids)


def test_every_failed_goal_link_points_at_an_existing_drilldown() -> None:
    goals, dialogues = corpus()
    html = render_report("t", [goal_success_section(summary(), goals, dialogues)])
    page = Page(html)
    table = html[html.index('id="goal-success-failed"') : html.index('id="goal-success-drilldown"')]
    links = re.findall(r'href="#([^"]+)"', table)
    assert len(links) == 2 and len(set(links)) == 2
    assert all(target in page.ids for target in re.findall(r'href="#([^"]+)"', html))
    # The drill-down opens from its summary, which names the dialogue, above the anchor.
    nasty = html[html.rindex("<details", 0, html.index(f'id="{links[0]}"')) :]
    assert nasty.index("Dialogue d&#34;1") < nasty.index("&lt;script&gt;alert(&#34;pwned")
    assert "T2: &lt;script&gt;" in table and "<b>E3</b> Incorrect Retrieval" in table
    assert anchor_id("p", "a b") != anchor_id("p", "a/b")


def test_drilldown_without_dialogue_text_shows_labels_only() -> None:
    goals, _ = corpus()
    goals[2]["turns"][0]["human"] = {"quality": "failure", "rcof": "E1", "note": "<asked twice>"}
    html = render_report("t", [goal_success_section(summary(), goals)])
    assert html.count("Dialogue text not given") == 2
    assert "user rephrased" in html and "answer 1" not in html
    assert '<span class="badge warn">ambiguous</span> human' in html
    assert "2 failure + human" in html and "&lt;asked twice&gt;" in html


def test_none_figures_render_as_a_dash_never_zero() -> None:
    empty = summary(gsr=None, gsr_single_turn=None, gsr_multi_turn=None, n_goals=None)
    section = goal_success_section(empty, [])
    assert ("GSR", MISSING) in section.overview and ("goals", MISSING) in section.overview
    overview = overview_of(render_report("t", [section]))
    assert overview.count('title="could not be computed">—</span>') >= 4
    assert "0.0%" not in overview and ">0<" not in overview
    length_chart = section.body[section.body.index("<svg") : section.body.index("</svg>")]
    assert length_chart.count("<rect") == 2 and length_chart.count(">n/a</text>") == 2


def test_bar_lengths_are_proportional_to_values() -> None:
    def sizes(svg: str, attr: str) -> list[float]:
        return [float(dict(a)[attr] or 0) for t, a in Page(svg).tags if t == "rect"]

    horizontal = bar_chart(["a", "b", "c", "d"], [Series("s", [1, 2, None, 4])], title="h")
    widths = sizes(horizontal, "width")
    assert len(widths) == 3 and ">n/a</text>" in horizontal
    assert widths[1] == pytest.approx(2 * widths[0], rel=1e-3)
    assert widths[2] == pytest.approx(4 * widths[0], rel=1e-3)
    vertical = bar_chart(["a", "b"], [Series("s", [0.25, 0.75])], title="v", horizontal=False)
    heights = sizes(vertical, "height")
    assert heights[1] == pytest.approx(3 * heights[0], rel=1e-3)
    grouped = bar_chart(["a"], [Series("x", [0.5]), Series("y", [-0.25])], title="g")
    bars = [a for t, a in Page(grouped).tags if t == "rect" and a.get("width") != "12"]
    pos, neg = (float(b["width"] or 0) for b in bars)
    assert pos == pytest.approx(2 * neg, rel=1e-3)
    assert float(bars[1]["x"] or 0) + neg == pytest.approx(float(bars[0]["x"] or 0), abs=0.02)
    with pytest.raises(ValueError):
        bar_chart(["a", "b"], [Series("s", [1.0])], title="bad")


def test_rcof_chart_and_agreement_show_counts_shares_and_references() -> None:
    human = summary()["gold_agreement"]
    body = goal_success_section(summary(human_agreement=human), []).body
    assert "E3 Incorrect Retrieval" in body and ">2 (66.7%)</text>" in body
    assert "Against gold labels" in body and "Against human verdicts" in body
    assert ">-0.20</text>" in body
    assert "No human verdicts" in goal_success_section(summary(), []).body
    assert "&lt;bad&gt;" in body and "Skipped records (1) and failed dialogues (0)" in body


def test_cap_note_appears_when_failed_goals_exceed_the_cap() -> None:
    goals = [goal(f"d{i}", 0, [turn(1, "failure", "E4")]) for i in range(7)]
    body = goal_success_section(summary(), goals, max_failed_goals=3).body
    table = body[body.index('id="goal-success-failed"') : body.index("drilldown")]
    assert table.count('href="#goal-success-d-') == 3
    assert "4 more failed goals not shown" in body
    assert body.count('<article class="drill"') == 3
    uncapped = goal_success_section(summary(), goals, max_failed_goals=7).body
    assert "more failed goals not shown" not in uncapped


def test_sections_render_in_order_with_their_own_anchors() -> None:
    first = Section("alpha", "Alpha", [("a", "1")], table(["first"], [["first body"]]))
    second = Section("beta", "Beta", [("b", "2")], table(["second"], [["second body"]]))
    html = render_report("t", [second, first])
    assert html.index('<section id="beta"') < html.index('<section id="alpha"')
    assert html.index("second body") < html.index("first body")
    toc = html[html.index('id="report-contents"') :]
    assert toc.index('href="#beta"') < toc.index('href="#alpha"')
    for bad in (
        [first, first],
        [Section("a b", "x", [], Markup())],
        [Section("report-overview", "x", [], Markup())],
    ):
        with pytest.raises(ValueError):
            render_report("t", bad)


def test_every_drilled_turn_and_teacher_shows_its_labels_badge() -> None:
    """Success, failure, and "no label" for anything else (none, or a label that is not text)."""
    goals, dialogues = corpus()
    odd = turn(3, None)
    odd["quality"], odd["teachers"][0]["quality"] = ["failure"], 7
    goals.append(goal("plain-2", 2, [odd]))
    html = str(goal_success_section(summary(), goals, dialogues).body)
    drilled = html[html.index("<strong>Dialogue plain-2</strong>") :]
    assert drilled.count('<span class="badge bad">failure</span>') == 3  # turn 1, its teachers
    assert drilled.count('<span class="badge muted">no label</span>') == 6  # turns 2 and 3
    nasty = html[html.index("<article") : html.index("<strong>Dialogue plain-2</strong>")]
    assert nasty.count('<span class="badge ok">success</span>') == 6 + 1  # turns 1, 3; goal G2
    assert nasty.count('<span class="badge bad">failure</span>') == 3  # turn 2, its teachers
