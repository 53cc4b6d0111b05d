"""The report's simulation section: how conversations ended and whose fault each failure was.

Drawn by ``simulation.html.j2``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from todeval.evals.report.page import Section, fmt_num
from todeval.evals.report.templating import render

SECTION_ID = "simulation"
CAUSES = ("agent", "user_simulator", "environment")


def simulation_section(summary: Mapping[str, Any], shown: int = 100) -> Section:
    """Terminations, failure attribution per cause, and each failure with its evidence."""
    simulation = summary.get("simulation") or {}
    counts = simulation.get("counts") or {}
    attribution = simulation.get("attribution") or {}
    by_cause = attribution.get("counts") or {}
    failures = attribution.get("failures") or []
    body = render(
        "simulation.html.j2",
        endings=[[str(k), fmt_num(v)] for k, v in (counts.get("terminations") or {}).items()],
        causes=[[cause, fmt_num(by_cause.get(cause, 0))] for cause in CAUSES],
        failures=[
            [str(f.get("id")), fmt_num(f.get("reward")), str(f.get("cause")),
             str(f.get("message_index")), str(f.get("evidence"))]
            for f in failures[:shown]
        ],
    )  # fmt: skip
    overview = [
        ("conversations", str(counts.get("conversations", 0))),
        ("failures: agent", str(by_cause.get("agent", 0))),
        ("failures: user simulator", str(by_cause.get("user_simulator", 0))),
        ("failures: environment", str(by_cause.get("environment", 0))),
    ]
    return Section(SECTION_ID, "Live simulation", overview, body)
