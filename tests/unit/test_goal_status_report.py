"""The report shows status accuracy on dialogue-confirmed goals beside status accuracy."""

from __future__ import annotations

from tests.unit.test_report_goal_tracking import summary
from todeval.evals.metrics.goal_tracking.confirmed_status import confirmed_status_report
from todeval.evals.report import MISSING, goal_tracking_section


def test_the_confirmed_figure_sits_beside_status_accuracy_with_its_breakdown() -> None:
    counts = {"completed:completed": 6, "completed:pending": 1, "completed:undetected": 1,
              "failed:failed": 1, "failed:abandoned": 1}  # fmt: skip
    body = goal_tracking_section(summary(**confirmed_status_report(counts)), []).body
    row = body.index("status accuracy on dialogue-confirmed goals")
    assert body.index("status tracking accuracy") < row < body.index("memory recall accuracy")
    assert "70.0% / 75.0% / 50.0%" in body  # 7 of 10; 6 of 8 completed; 1 of 2 failed
    assert "10 / 2" not in body and "10 / 1" in body  # goals / of them undetected
    assert "never detected" in body and "Dialogue-confirmed goals" in body


def test_without_confirmed_goals_the_figure_is_a_dash_with_the_reason() -> None:
    body = goal_tracking_section(summary(**confirmed_status_report({})), []).body
    assert f'{MISSING}</span> <span class="note">(the gold confirms no outcome' in body
    assert "Dialogue-confirmed goals by" not in body  # no table over nothing
