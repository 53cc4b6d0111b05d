"""The goal-tracking report's table of dialogue-confirmed goals and how the tracker ended them.

Reads the summary's ``confirmed_breakdown``
(:func:`evals.metrics.goal_tracking.confirmed_status.confirmed_status_report`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from todeval.evals.report.page import fmt_num, fmt_pct


def confirmed_goals(summary: Mapping[str, Any]) -> dict[str, Any] | None:
    """The breakdown table's ``headers`` and ``rows``, or None when no outcome is confirmed."""
    breakdown = summary.get("confirmed_breakdown") or {}
    rows = []
    for outcome in ("completed", "failed"):
        counts = breakdown.get(outcome) or {}
        total = sum(counts.values())
        if total:
            accuracy = summary.get(f"confirmed_{outcome}_accuracy")
            cells = [fmt_num(counts.get(final, 0)) for final in counts]
            rows.append([outcome, fmt_num(total), fmt_pct(accuracy), *cells])
    if not rows:
        return None
    finals = list((breakdown.get("completed") or breakdown.get("failed") or {}).keys())
    ends = [f"ends {final}" if final != "undetected" else "never detected" for final in finals]
    return {"headers": ["dialogue confirms", "goals", "tracker right", *ends], "rows": rows}
