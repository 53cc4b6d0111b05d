"""The goal-tracking section of the report: figures, the progress curve, tokens, goal timelines."""

from __future__ import annotations

import copy
import re
from collections import defaultdict
from typing import Any

import pytest

from tests.unit.test_report import NASTY_ID, NASTY_MSG, Page
from todeval.evals.report import MISSING, Section, goal_tracking_section, render_report, table
from todeval.evals.report.svg import Series, line_chart

STATUSES = ["open", "pending", "completed", "failed", "abandoned"]


def curve(f1: list[float | None], accuracy: list[float | None]) -> list[dict[str, Any]]:
    return [
        {"progress": round((k + 1) / 10, 4), "detection_f1": f, "status_accuracy": a,
         "n_gold": 4, "n_pred": 4, "n_matched": 3, "n_status_correct": 2, "n_dialogues": 2}
        for k, (f, a) in enumerate(zip(f1, accuracy, strict=True))
    ]  # fmt: skip


def summary(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "n_dialogues": 2, "n_gold_dialogues": 2, "dgcr": 0.875, "dgcr_gold": 0.8,
        "n_decided_goals": 8, "n_blocked_goals": 1, "ntc": 4.5, "ntc_gold": 5.25,
        "n_completed_goals": 7, "goal_detection_precision": 0.75, "goal_detection_recall": 0.6,
        "goal_detection_f1": 0.6667, "n_pred_goals": 8, "n_gold_goals": 10,
        "n_matched_goals": 6, "status_accuracy": 0.8333,
        "progress_curve": curve([1.0, 1.0, 0.9, 0.9, 0.8, 0.8, 0.8, 0.7, 0.7, 0.7],
                                [1.0, 0.9, 0.9, 0.8, 0.8, 0.7, 0.7, 0.6, 0.6, 0.5]),
        "memory_recall_accuracy": 0.9, "n_memory_queries": 20,
        "proactivity_effectiveness": {"value": None, "reason": "needs LLM-judge <verdicts>",
                                      "n_actions": 0, "n_judged": 0},
        "n_turns": 30, "latency_ms_p50": 850.0, "latency_ms_p95": 23500.0,
        "latency_ms_mean": 0.84, "llm_calls_per_turn": 1.5, "prompt_tokens_per_turn": 900.0,
        "completion_tokens_per_turn": 120.0,
        "prompt_tokens_by_turn": {"1": 400.0, "2": 600.0, "10": 1300.0},
        "macro": {"dgcr": 0.9, "ntc": 4.0, "goal_detection_f1": None},
        "counts": {"dialogues": 2, "utterances": 30, "goals": 8, "skipped_records": 1,
                   "failed_dialogues": 0},
        "judges": {"goal_extraction": "openai:gpt-4o-mini", "others": "local"},
        "skipped": [{"file": "in.jsonl", "line": 3, "dialogue_id": "<bad>", "message": "x"}],
        "failed": [],
    }  # fmt: skip
    return base | overrides


def goal(goal_id: str, history: list[tuple[int, str]], **extra: Any) -> dict[str, Any]:
    return {
        "goal_id": goal_id,
        "service": extra.get("service", "Restaurants_2"),
        "intent": extra.get("intent", "ReserveRestaurant"),
        "description": extra.get("description", "book a table"),
        "slots": extra.get("slots", {"party_size": 2}),
        "status": history[-1][1] if history else None,
        "status_history": [{"turn": t, "status": s} for t, s in history],
        "dependencies": extra.get("dependencies", []),
    }


def dialogue(
    dialogue_id: str, goals: list[dict[str, Any]], n_turns: int, **extra: Any
) -> dict[str, Any]:
    turns = [{"turn": t, "goal_states": {}} for t in range(1, n_turns + 1)]
    return {"dialogue_id": dialogue_id, "goals": goals, "turns": turns} | {"gold": None} | extra


def corpus() -> list[dict[str, Any]]:
    first = dialogue(
        "d1",
        [
            goal("g1", [(1, "open"), (3, "pending"), (6, "completed")], intent="FindRestaurants"),
            goal("g2", [(4, "open"), (5, "failed")], dependencies=["g1"]),
            goal("g3", [(2, "open"), (4, "not_mentioned"), (6, "abandoned")], service=""),
        ],
        8,
        gold={"g1": "completed", "g2": "completed"},
    )
    nasty = dialogue(
        NASTY_ID,
        [goal("<g9>", [(1, "open")], service="<svc>", intent=NASTY_MSG, description=NASTY_MSG,
              slots={"who": "<b>me</b>"}, dependencies=["<g0>"])],
        2,
        gold={"<gold>": "open"},
    )  # fmt: skip
    return [first, nasty]


def tags(html: str, name: str, **attrs: str) -> list[dict[str, str | None]]:
    return [
        a for t, a in Page(html).tags if t == name and all(a.get(k) == v for k, v in attrs.items())
    ]


def svg_of(html: str, title: str) -> str:
    start = html.index(f"<title>{title}")
    return html[html.rindex("<svg", 0, start) : html.index("</svg>", start) + 6]


def test_page_parses_with_balanced_tags_and_unique_ids() -> None:
    other = Section("memory", "Memory", [("recall@5", "0.74")], table(["memory"], [["0.74"]]))
    html = render_report("run", [goal_tracking_section(summary(), corpus()), other])
    page = Page(html)
    assert page.errors == [] and page.stack == []
    assert len(page.ids) == len(set(page.ids)) and "goal-tracking" in page.ids
    assert {"svg", "rect", "polyline", "circle", "details"} <= {t for t, _ in page.tags}
    assert html.count('<article class="timeline"') == 2


def test_headline_figures_are_formatted_for_the_overview() -> None:
    overview = dict(goal_tracking_section(summary(), []).overview)
    assert overview["dGCR"] == "87.5%" and overview["NTC (turns)"] == "4.50"
    assert (
        overview["goal detection F1"] == "66.7%" and overview["status tracking accuracy"] == "83.3%"
    )
    assert overview["memory recall accuracy"] == "90.0%" and overview["LLM calls / turn"] == "1.50"
    assert (overview["latency p50"], overview["latency p95"]) == ("850 ms", "23.50 s")
    assert "0.84 ms" in goal_tracking_section(summary(), []).body  # the mean, under 10 ms


def test_none_figures_render_a_dash_with_the_reason_never_zero() -> None:
    kept = ("counts", "judges", "proactivity_effectiveness")
    empty = summary(**{key: None for key in summary() if key not in kept})
    empty |= {"n_gold_dialogues": 0, "n_turns": 0, "progress_curve": [], "n_decided_goals": 0}
    section = goal_tracking_section(empty, [])
    assert all(value == MISSING for _, value in section.overview)
    overview = render_report("t", [section]).split('id="report-contents"')[0]
    assert overview.count(f'title="could not be computed">{MISSING}</span>') == 8
    assert not re.search(r">0(\.0+)?( ms|%)?<", overview)
    body = section.body
    assert "(needs gold annotations; no dialogue has them)" in body
    assert "(no per-turn cost records)" in body and "No progress curve" in body
    assert "no goal was decided (completed or failed)" in body
    assert "(needs LLM-judge &lt;verdicts&gt;)" in body  # proactivity under local judges


def test_segments_span_the_status_history_in_utterances() -> None:
    svg = svg_of(goal_tracking_section(summary(), corpus()).body, "Goal timeline of dialogue d1")
    rows: dict[str, list[tuple[float, float, str]]] = defaultdict(list)
    for rect in tags(svg, "rect", **{"class": "seg"}):
        rows[str(rect["y"])].append((float(rect["x"] or 0), float(rect["width"] or 0),
                                     str(rect["data-status"])))  # fmt: skip
    g1, g2, g3 = (rows[y] for y in sorted(rows, key=float))
    assert [s for _, _, s in g1] == ["open", "pending", "completed"]
    x0, cell = g1[0][0], g1[0][1] / 2  # open over utterances 1-2
    assert re.search(rf'x="{x0 + cell / 2:.1f}"[^>]*>1</text>', svg)  # tick 1 over utterance 1
    final = next(t for t in tags(svg, "text") if t.get("text-anchor") == "start")  # g1's status
    assert g1[-1][0] + g1[-1][1] < float(final["x"] or 0)  # the plot ends before the status
    spans = {"g1": [(1, 2), (3, 5), (6, 8)], "g2": [(4, 4), (5, 8)], "g3": [(2, 3), (6, 8)]}
    for row, expected in zip((g1, g2, g3), spans.values(), strict=True):
        assert [(round((x - x0) / cell) + 1, round((x - x0 + w) / cell)) for x, w, _ in row] == (
            expected
        )
        assert all(abs((x - x0) / cell - round((x - x0) / cell)) < 1e-3 for x, _, _ in row)
    assert [s for _, _, s in g3] == ["open", "abandoned"]  # not_mentioned is a gap
    assert "g1 pending: utterances 3–5" in svg and "g2 open: utterance 4" in svg


def test_history_is_read_from_turn_states_when_a_goal_has_none() -> None:
    states = ["open", "open", "pending", None, "completed"]
    turns = [{"turn": t, "goal_states": {"g1": s} if s else {}} for t, s in enumerate(states, 1)]
    settled = goal("g2", [(2, "open"), (2, "completed"), (4, "completed")])  # last at 2 counts
    line = {"dialogue_id": "d", "goals": [goal("g1", []), settled], "turns": turns, "gold": None}
    svg = svg_of(goal_tracking_section(summary(), [line]).body, "Goal timeline of dialogue d")
    segs = tags(svg, "rect", **{"class": "seg"})
    assert [s["data-status"] for s in segs] == ["open", "pending", "completed", "completed"]
    widths = [float(s["width"] or 0) for s in segs]
    assert widths[0] == pytest.approx(2 * widths[1]) and widths[2] == pytest.approx(widths[1])
    assert widths[3] == pytest.approx(4 * widths[1])  # g2 completed over utterances 2-5


def test_legend_has_all_five_statuses_and_other_only_when_needed() -> None:
    body = goal_tracking_section(summary(), corpus()).body
    legend = svg_of(body, "Goal status colours")
    assert re.findall(r">([a-z]+)</text>", legend) == STATUSES
    assert len(tags(legend, "rect")) == 5
    odd = dialogue("odd", [goal("g1", [(1, "open"), (2, "Escalated")])], 3)
    odd_body = goal_tracking_section(summary(), [odd]).body
    legend = svg_of(odd_body, "Goal status colours")
    assert re.findall(r">([a-z]+)</text>", legend) == [*STATUSES, "other"]
    (escalated,) = tags(odd_body, "rect", **{"data-status": "escalated"})
    assert escalated["fill"] == "#cfcfcf" and "g1 escalated: utterances 2–3" in odd_body


def test_dependencies_are_labelled_and_drawn_from_the_prerequisites_completion() -> None:
    svg = svg_of(goal_tracking_section(summary(), corpus()).body, "Goal timeline of dialogue d1")
    assert ">depends on g1</text>" in svg
    (arrow,) = re.findall(r'<g class="dependency"><title>([^<]*)</title><line x1="([\d.]+)"', svg)
    assert arrow[0] == "g2 depends on g1, completed at utterance 6"
    completed = next(r for r in tags(svg, "rect") if r.get("data-status") == "completed")
    x, w = float(completed["x"] or 0), float(completed["width"] or 0)
    assert float(arrow[1]) == pytest.approx(x + w / 3 / 2, abs=0.01)  # middle of utterance 6
    body = goal_tracking_section(summary(), corpus()).body
    assert "Gold final statuses (2 annotated goals): g1 completed, g2 completed." in body


def test_user_text_is_escaped() -> None:
    html = render_report("t", [goal_tracking_section(summary(judges={"x": "<j>"}), corpus())])
    page = Page(html)
    assert "script" not in {t for t, _ in page.tags} and "<b>" not in html and "<svc>" not in html
    assert "&lt;script&gt;alert(&#34;pwned&#34;)&lt;/script&gt;" in html
    assert "Dialogue d&#34;1&#39;&gt;&lt;script&gt;" in html
    assert "depends on &lt;g0&gt;" in html and "&lt;gold&gt; open" in html
    assert "who=&lt;b&gt;me&lt;/b&gt;" in html and "x: &lt;j&gt;" in html
    assert "&lt;bad&gt;" in html  # the skipped record
    assert all(re.fullmatch(r"[A-Za-z][\w-]*", i) for i in page.ids)


def test_cap_note_says_how_many_dialogues_have_no_timeline() -> None:
    lines = [dialogue(f"d{i}", [goal("g1", [(1, "open")])], 2) for i in range(5)]
    body = goal_tracking_section(summary(), lines, max_timelines=2).body
    assert body.count('<article class="timeline"') == 2 and "Dialogue d2" not in body
    assert "3 more dialogues not shown (max_timelines=2)." in body
    assert "Goal timelines (5 dialogues)" in body
    one_more = goal_tracking_section(summary(), lines, max_timelines=4).body
    assert "1 more dialogue not shown (max_timelines=4)." in one_more
    uncapped = goal_tracking_section(summary(), lines, max_timelines=5).body
    assert uncapped.count('<article class="timeline"') == 5 and "not shown" not in uncapped


def test_progress_curve_plots_both_rates_on_a_shared_scale() -> None:
    points = summary()["progress_curve"]
    points[4]["status_accuracy"] = None
    svg = svg_of(goal_tracking_section(summary(progress_curve=points), []).body,
                 "Goal tracking over dialogue progress")  # fmt: skip
    dots = tags(svg, "circle")
    assert len(dots) == 19 and ">goal detection F1</text>" in svg
    f1 = [(float(d["cx"] or 0), float(d["cy"] or 0)) for d in dots[:10]]
    (x1, y1), (x10, y10) = f1[0], f1[-1]  # F1 1.0 at 10%, 0.7 at 100%
    bottom = y1 + (y10 - y1) / 0.3  # where 0 is
    for label, y in (("0%", bottom), ("100%", y1)):
        assert re.search(rf'y="{y:.1f}"[^>]*>{label}</text>', svg)  # on the axis ticks
    assert f1[4][1] == pytest.approx(bottom - 0.8 * (bottom - y1), abs=0.02)
    assert (x10 - x1) == pytest.approx(9 * (f1[1][0] - x1), abs=0.02)
    assert len(tags(svg, "polyline")) == 3  # status accuracy breaks at its None
    assert "50% · status tracking accuracy" not in svg and "40% · status tracking accuracy" in svg


def test_prompt_tokens_chart_only_with_tokens() -> None:
    body = goal_tracking_section(summary(), []).body
    svg = svg_of(body, "Prompt tokens by turn")
    xs = [float(d["cx"] or 0) for d in tags(svg, "circle")]
    assert len(xs) == 3 and (xs[2] - xs[0]) == pytest.approx(9 * (xs[1] - xs[0]))
    assert "10 · mean prompt tokens: 1,300" in svg
    for empty, note in (({}, "No prompt token counts"), ({"1": 0.0}, "no update sent a prompt")):
        body = goal_tracking_section(summary(prompt_tokens_by_turn=empty), []).body
        assert note in body and "Prompt tokens by turn</title>" not in body


def test_line_chart_needs_one_value_per_x_and_leaves_the_input_alone() -> None:
    with pytest.raises(ValueError):
        line_chart([1.0, 2.0], [Series("s", [1.0])], title="bad")
    lines = corpus()
    before = copy.deepcopy(lines)
    goal_tracking_section(summary(), lines)
    assert lines == before
