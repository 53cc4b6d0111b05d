"""The memory section of the report (MAP / MS-TOD, paper 001: Tables 2-4, Fig. 6).

Headline figures each beside its ceiling (:mod:`evals.metrics.memory.ceiling`), retrieval,
response and repair tables, where the recoverable values were, DTE per item, the items whose
confirmation missed a gold slot and, with ``--baselines``, the paper's comparison settings.
Drawn by ``memory.html.j2``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from todeval.evals.metrics.memory.suite import MemorySuite
from todeval.evals.metrics.memory.table import COLUMNS, null_reasons
from todeval.evals.outputs import fmt_figure
from todeval.evals.report.page import MISSING, Section, as_number, fmt_num, fmt_pct, shorten
from todeval.evals.report.svg import Series, bar_chart
from todeval.evals.report.templating import render

SECTION_ID = "memory"
MAX_MISSED_ITEMS = 100
"""Items with a missed slot listed in full (the rest are in results.jsonl)."""

Row = Mapping[str, Any]


def _dte_chart(lines: Sequence[Row]) -> dict[str, Any] | None:
    counts = Counter(int(line["dte"]) for line in lines if line.get("dte") is not None)
    if not counts:
        return None
    turns = list(range(1, max(counts) + 1))
    chart = bar_chart(
        [str(t) for t in turns],
        [Series("items", [float(counts.get(t, 0)) for t in turns])],
        title="Items by dialogue turn efficiency",
        horizontal=False,
        fmt=lambda v: f"{v:.0f}",
    )
    caption = "System turns from the confirmation on (1 = the confirmation was right)"
    return {"svg": chart, "caption": caption}


def _missed_rows(lines: Sequence[Row]) -> list[list[str]]:
    rows = []
    for line in lines:
        scores = line.get("scores") or {}
        jga = scores.get("jga")
        if jga is None or jga >= 1.0:
            continue
        goal = ", ".join(f"{k}={v}" for k, v in (line.get("task_goal") or {}).items())
        rows.append(
            [str(line.get("eval_id")), str(line.get("intent")), shorten(goal, 160),
             shorten(line.get("response"), 200), fmt_pct(scores.get("slot_accuracy"), 0),
             fmt_pct(scores.get("slot_ceiling"), 0), fmt_num(line.get("dte"), 0)]
        )  # fmt: skip
    return rows


def of_ceiling(value: Any, ceiling: Any, *, word: str = "ceiling") -> str:
    """``"52.0% of a ceiling 61.0%"`` (the figure alone when the ceiling is unknown)."""
    figure = fmt_pct(value)
    return figure if as_number(ceiling) is None else f"{figure} of a {word} {fmt_pct(ceiling)}"


def _ceiling(summary: Row) -> dict[str, str] | None:
    """Where the recoverable gold values were and how many the responses stated.

    None when there is no ceiling: the items were scored without their memory and context.
    """
    if as_number(summary.get("slot_ceiling_pooled")) is None:
        return None
    keys = ("slot_ceiling_pooled", "slot_ceiling_memory", "slot_ceiling_context",
            "ceiling_reached", "slots_guessed")  # fmt: skip
    return {key: fmt_pct(summary.get(key)) for key in keys}


#: How the report names each bank source (``memory.bank_source``; ``llm``: an LLM builder's).
BANK_SOURCES = {
    "dialogue": "read from the dialogue",
    "task_goal_oracle": "task goal (oracle)",
    "llm": "LLM-built",
}


def bank_label(summary: Row) -> str:
    """Which memory bank the run read, in words (MISSING when the summary does not say)."""
    for where in ("judges", "configuration"):
        block = summary.get(where)
        if isinstance(block, Mapping) and block.get("bank_source"):
            return BANK_SOURCES.get(str(block["bank_source"]), str(block["bank_source"]))
    return MISSING


def _configuration(summary: Row) -> str:
    """Which memory setting and activation the run used (empty when the summary does not say)."""
    config = summary.get("configuration")
    if not isinstance(config, Mapping) or "setting" not in config:
        return ""
    return f"Setting: {config['setting']}, activation: {config.get('activation', MISSING)}."


def _baseline_rows(rows: Sequence[Row]) -> list[list[str]]:
    """One row per comparison setting: its name, where the paper has it, items and figures."""
    return [
        [str(row.get("configuration", "")), str(row.get("paper", "")), str(row.get("items", 0)),
         *(fmt_num(row.get(key), 3) for _, key in COLUMNS)]
        for row in rows
    ]  # fmt: skip


def memory_section(summary: Row, lines: Sequence[Row]) -> Section:
    """The report section of one memory run (see the module docstring)."""
    dte, floor = summary.get("dte"), summary.get("dte_floor")
    overview = [
        ("Recall@5", fmt_pct(summary.get("recall_at_5"))),
        ("slot accuracy", of_ceiling(summary.get("slot_accuracy"), summary.get("slot_ceiling"))),
        ("JGA", of_ceiling(summary.get("jga"), summary.get("jga_ceiling"))),
        ("DTE", fmt_num(dte) + ("" if as_number(floor) is None else f" (floor {fmt_num(floor)})")),
        ("S.R.", fmt_pct(summary.get("success_rate"))),
        ("memory bank", bank_label(summary)),
    ]
    get = summary.get
    missed = _missed_rows(lines)
    body = render(
        "memory.html.j2",
        items=str(get("items", 0)),
        judges="; ".join(f"{role}: {spec}" for role, spec in (get("judges") or {}).items()),
        configuration=_configuration(summary),
        retrieval=[[fmt_pct(get(k)) for k in ("recall_at_3", "recall_at_5", "recall_at_10",
                                                "hit_at_5")]],
        response=[
            ["per item (mean)", *(fmt_pct(get(k)) for k in ("slot_accuracy", "slot_ceiling",
                                                             "jga", "jga_ceiling",
                                                             "jga_mention"))],
            ["pooled over gold slots", fmt_pct(get("slot_accuracy_pooled")),
             fmt_pct(get("slot_ceiling_pooled")), MISSING, MISSING, MISSING],
        ],
        ceiling=_ceiling(summary),
        generation=[[fmt_num(get(k)) for k in ("bleu", "rouge_l", "gpt4_score")]],
        gpt4_score_reason=str(get("gpt4_score_reason") or ""),
        repair=[[fmt_num(get("repair_loops"), 0), fmt_num(dte), fmt_num(floor),
                 fmt_pct(get("success_rate"))]],
        dte_chart=_dte_chart(lines),
        missed=missed[:MAX_MISSED_ITEMS],
        n_missed=len(missed),
        baseline_headers=["setting", "paper", "items", *(name for name, _ in COLUMNS)],
        baselines=_baseline_rows(get("baselines") or []),
        baseline_notes=null_reasons(get("baselines") or []),
    )  # fmt: skip
    return Section(SECTION_ID, "Memory and slot repair (MAP / MS-TOD)", overview, body)


ABLATION_FIGURES = (
    "recall_at_3",
    "recall_at_5",
    "recall_at_10",
    "slot_accuracy",
    "slot_ceiling",
    "jga",
    "jga_ceiling",
    "dte",
    "dte_floor",
    "success_rate",
    "bleu",
    "rouge_l",
)


def ablation_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """MAP's comparison grid as a text table: one configuration per row."""
    header = f"{'configuration':34}" + "".join(f"{k:>14}" for k in ABLATION_FIGURES)
    body = [
        f"{row['configuration']:34}"
        + "".join(f"{fmt_figure(row.get(k)):>14}" for k in ABLATION_FIGURES)
        for row in rows
    ]
    return "\n".join([header, *body])


def memory_evaluation_section(summary: Row, suite: MemorySuite) -> Section:
    """Memory's section of the evaluation report."""
    return memory_section(summary, suite.lines)
