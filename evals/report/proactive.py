"""The ProactiveEval section of the report: a synthesis run (paper 003, Figure 2).

Shows the items kept by domain and tier, what the pipeline rejected or could not finish, the
refinement rounds, and the difficulty signal after each round (panel members that found the
target). The task sections (planning and guidance scores) join when those runs are wired.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from markupsafe import Markup

from evals.proactive_schema import TIERS
from evals.report.page import Section, fmt_num, skipped_records_html, table

SECTION_ID = "proactive"


def synthesis_section(summary: Mapping[str, Any]) -> Section:
    """The synthesis run's section (every value escaped by ``Markup.format`` or ``table``)."""
    counts = summary["counts"]
    by_domain: Mapping[str, Mapping[str, int]] = summary.get("by_domain", {})
    tier_rows = [
        [domain, *(str(tiers.get(tier, 0)) for tier in TIERS), str(sum(tiers.values()))]
        for domain, tiers in by_domain.items()
    ]
    rounds = [[str(k), str(v)] for k, v in summary.get("refinement_rounds", {}).items()]
    hits = [[str(k), fmt_num(v)] for k, v in summary.get("mean_hits_by_round", {}).items()]
    judges = summary.get("judges", {})
    lead = Markup(
        "<p>Kept {} of {} environments; {} rejected by the final check, {} failed. Writer: {}; "
        "difficulty panel: {}; final check: {}.</p>"
    ).format(
        counts["kept"],
        counts["attempted"],
        counts["rejected_by_final_check"],
        counts["failed"],
        judges.get("synthesis_writer"),
        ", ".join(judges.get("difficulty_panel", [])),
        ", ".join(judges.get("final_check_panel", [])),
    )
    body = Markup("").join(
        [
            lead,
            Markup("<h3>Items by domain and tier</h3>"),
            table(["domain", *TIERS, "total"], tier_rows),
            Markup("<h3>Refinement rounds</h3>"),
            table(["rounds", "environments"], rounds),
            Markup("<h3>Panel members finding the target, after each round</h3>"),
            table(["round", "mean hits"], hits),
            skipped_records_html(summary),
        ]
    )
    overview = [
        ("environments kept", str(counts["kept"])),
        ("environments per second", fmt_num(summary.get("environments_per_s"))),
    ]
    return Section(SECTION_ID, "ProactiveEval data synthesis", overview, body)
