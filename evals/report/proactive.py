"""The ProactiveEval sections of the report (paper 003): a synthesis run, and a task run.

Synthesis (Figure 2): items by domain and tier, rejections, refinement rounds and the
difficulty signal per round. Tasks: each figure's mean and std over runs by group, why
dialogues stopped, and the unscored runs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from todeval.evals.proactive_schema import TIERS
from todeval.evals.report.page import MISSING, Section, fmt_num, skipped_records_html
from todeval.evals.report.templating import render
from todeval.evals.report.validity import floor_basis, floor_text

SECTION_ID = "proactive"


def synthesis_section(summary: Mapping[str, Any]) -> Section:
    """The synthesis run's section (an autoescaping template)."""
    counts = summary["counts"]
    by_domain: Mapping[str, Mapping[str, int]] = summary.get("by_domain", {})
    tier_rows = [
        [domain, *(str(tiers.get(tier, 0)) for tier in TIERS), str(sum(tiers.values()))]
        for domain, tiers in by_domain.items()
    ]
    rounds = [[str(k), str(v)] for k, v in summary.get("refinement_rounds", {}).items()]
    hits = [[str(k), fmt_num(v)] for k, v in summary.get("mean_hits_by_round", {}).items()]
    judges = summary.get("judges", {})
    body = render(
        "proactive_synthesis.html.j2",
        kept=counts["kept"],
        attempted=counts["attempted"],
        rejected=counts["rejected_by_final_check"],
        failed=counts["failed"],
        writer=judges.get("synthesis_writer"),
        panel=", ".join(judges.get("target_prediction", [])),
        final_check=", ".join(judges.get("final_check", [])),
        tier_headers=["domain", *TIERS, "total"],
        tier_rows=tier_rows,
        rounds=rounds,
        hits=hits,
        skipped=skipped_records_html(summary),
    )
    overview = [
        ("environments kept", str(counts["kept"])),
        ("environments per second", fmt_num(summary.get("environments_per_s"))),
    ]
    return Section(SECTION_ID, "ProactiveEval data synthesis", overview, body)


#: A task's figures in the report, in order, with their headings.
TASK_FIGURES: dict[str, tuple[tuple[str, str], ...]] = {
    "target_planning": (("score", "score (1-10)"),),
    "dialogue_guidance": (
        ("score", "score (1-10)"),
        ("reached", "target reached"),
        ("turns", "turns"),
        ("target_density", "target density"),
        ("initiation_density", "initiation density"),
    ),
}


def mean_std(figure: Mapping[str, Any] | None) -> str:
    """``mean ± std`` (std left out when there is none), or MISSING."""
    if not figure or figure.get("mean") is None:
        return MISSING
    std = figure.get("std")
    return fmt_num(figure["mean"]) + ("" if std is None else f" ± {fmt_num(std)}")


def task_section(summary: Mapping[str, Any], lines: Sequence[Mapping[str, Any]] = ()) -> Section:
    """A target-planning or dialogue-guidance run's section."""
    task = str(summary.get("task"))
    figures = TASK_FIGURES.get(task, TASK_FIGURES["target_planning"])
    overall = [mean_std(summary["figures"].get(key)) for key, _ in figures]
    floors = summary.get("floors") or {}
    floor_row = [floor_text(floors.get(key), fraction=False) for key, _ in figures]
    groups = [
        {
            "name": name,
            "rows": [
                [value, *(mean_std(found.get(key)) for key, _ in figures)]
                for value, found in by_value.items()
            ],
        }
        for name, by_value in summary.get("by", {}).items()
    ]
    stops = Counter(str(line.get("stop_reason")) for line in lines if line.get("stop_reason"))
    run = summary.get("run", {})
    counts = summary["counts"]
    body = render(
        "proactive_tasks.html.j2",
        runs=str(counts["runs"]),
        environments=str(counts["environments"]),
        failed=str(counts["failed"]),
        skipped=str(counts["skipped"]),
        agent=str(run.get("agent")),
        judges="; ".join(f"{role}: {spec}" for role, spec in summary.get("judges", {}).items()),
        headers=[label for _, label in figures],
        overall=overall,
        floor_row=floor_row if any(floor_row) else None,
        floor_basis=floor_basis(floors),
        groups=groups,
        stops=[[reason, str(n)] for reason, n in stops.most_common()],
        unscored=_unscored(task, lines),
    )
    title = "target planning" if task == "target_planning" else "dialogue guidance"
    overview = [(f"{title} score", overall[0])]
    if floors.get("score"):
        overview.append(("do-nothing floor", fmt_num(floors["score"].get("value"))))
    return Section(f"{SECTION_ID}-{task}", f"ProactiveEval {title}", overview, body)


def _unscored(task: str, lines: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    planning = task == "target_planning"
    key, score = ("plan_verdict", "score") if planning else ("guidance_verdict", "overall")
    rows = []
    for line in lines:
        verdict = line.get(key) or {}
        if verdict.get(score) is None:
            basis = verdict.get("basis") or verdict.get("overall_basis")
            why = line.get("plan_error") or basis or line.get("stop_reason")
            rows.append([str(line.get("eval_id")), str(why or "not scored")])
    return rows
