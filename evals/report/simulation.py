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
    audit = simulation.get("simulator_audit") or {}
    faults = simulation.get("tool_faults") or {}
    body = render(
        "simulation.html.j2",
        audit=_audit_rows(audit),
        audited=audit,
        apart=[
            [group.replace("_", " "), fmt_num(f.get("conversations")), fmt_num(f.get("tsr")),
             fmt_num(f.get("reward"))]
            for group, f in (audit.get("figures") or {}).items()
        ],
        faults=faults.get("spec"),
        recovery=[
            [kind, fmt_num(r["faults"]), fmt_num(r["retried_rate"]), fmt_num(r["told_user_rate"]),
             fmt_num(r["recovered_rate"]), fmt_num(r["false_success_rate"])]
            for kind, r in (faults.get("recovery") or {}).items()
        ],
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
        ("simulator audit: flagged", str(audit.get("flagged", 0))),
        *_noise_rows(simulation.get("noise") or {}),
    ]
    return Section(SECTION_ID, "Live simulation", overview, body)


def _audit_rows(audit: Mapping[str, Any], shown: int = 100) -> list[list[str]]:
    return [
        [str(row.get("id")), str(flag.get("flag")), str(flag.get("message_index")),
         str(flag.get("evidence"))]
        for row in (audit.get("flagged_conversations") or [])[:shown]
        for flag in row.get("flags") or []
    ]  # fmt: skip


def _noise_rows(noise: Mapping[str, Any]) -> list[tuple[str, str]]:
    tsr = noise.get("tsr") or {}
    if tsr.get("low") is None:
        return []
    rows = [("TSR, 95 % interval over tasks", f"{fmt_num(tsr['low'])} – {fmt_num(tsr['high'])}")]
    if "trial_std" in tsr:
        rows.append(("TSR per trial", ", ".join(fmt_num(v) for v in tsr["per_trial"])))
        rows.append(("tasks that flip between trials", fmt_num(noise.get("flip_rate"))))
    return rows
