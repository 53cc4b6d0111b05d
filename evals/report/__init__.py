"""The static HTML report: one offline page, a section per subsystem, plots as inline SVG.

Example:
    >>> from pathlib import Path
    >>> from evals.report import goal_success_section, write_report
    >>> section = goal_success_section(summary, goals, dialogues)  # doctest: +SKIP
    >>> write_report(Path("runs/report.html"), "todeval", [section])  # doctest: +SKIP

A subsystem renders its own template (importing ``_macros.html.j2``) into a :class:`Section`;
every template autoescapes, so no section escapes anything by hand.
"""

from todeval.evals.report.goal_success import goal_success_section
from todeval.evals.report.goal_tracking import goal_tracking_section
from todeval.evals.report.page import (
    MISSING,
    Section,
    anchor_id,
    fmt_num,
    fmt_pct,
    num_html,
    pct_html,
    render_report,
    shorten,
    table,
    value_html,
    write_report,
)
from todeval.evals.report.svg import Series, bar_chart
from todeval.evals.report.templating import render

__all__ = [
    "MISSING",
    "Section",
    "Series",
    "anchor_id",
    "bar_chart",
    "fmt_num",
    "fmt_pct",
    "goal_success_section",
    "goal_tracking_section",
    "num_html",
    "pct_html",
    "render",
    "render_report",
    "shorten",
    "table",
    "value_html",
    "write_report",
]
