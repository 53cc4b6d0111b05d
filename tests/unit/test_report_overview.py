"""The evaluation report's first screen: every figure with who decided it (issue 31)."""

from __future__ import annotations

from typing import Any

from todeval.evals.report.evaluation import figures_section, records_section
from todeval.evals.report.page import render_report


def _summary(**metrics: float) -> dict[str, Any]:
    return {"metrics": metrics, "counts": {"records": 2}, "validity": {}}


def test_the_figures_and_their_judges_lead_the_overview_before_any_section() -> None:
    html = render_report("t", [figures_section(_summary(gsr=0.4, tsr=0.9))])
    overview = html[html.index('id="report-overview"') : html.index('id="report-contents"')]
    assert 'class="data figures"' in overview and "Goal Success Rate" in overview
    assert "decided by" in overview
    assert 'class="data figures"' not in html[html.index('id="report-contents"') :]


def test_where_gsr_and_dgcr_both_appear_the_report_says_they_count_different_goals() -> None:
    both = figures_section(_summary(gsr=0.4, dgcr=0.8)).lead
    one = figures_section(_summary(gsr=0.4)).lead
    assert both is not None and "count different goals" in both
    assert one is not None and "count different goals" not in one
    assert figures_section(_summary()).lead is None  # no figure: no table


def test_a_records_column_empty_on_every_row_is_left_out() -> None:
    lines = [
        {"record_id": "r1", "kind": "mtg", "status": "done",
         "metrics": {"gsr": {"num": 1, "den": 2}}},
        {"record_id": "r2", "kind": "mtg", "status": "done", "metrics": {}},
    ]  # fmt: skip
    body = records_section(lines, {}, total=2).body
    assert "Goal Success Rate" in body and "50.0%" in body
    assert "goal detection F1" not in body and "dGCR" not in body
