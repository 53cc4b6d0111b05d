"""The memory section of the report (MAP / MS-TOD, paper 001: Tables 2-4, Fig. 6).

It reads a memory run's summary (:func:`evals.metrics.memory.scores.memory_summary` plus ``judges``)
and its item lines (``todeval memory eval``'s ``items.jsonl``), and shows: the headline
figures; retrieval (Recall@3/5/10, hit@5), response (slot accuracy, JGA, BLEU, ROUGE-L) and
repair (DTE, S.R.) tables; DTE per item as a histogram; and the items whose confirmation missed
a gold slot, with what the reader wrote.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from evals.outputs import fmt_figure
from evals.report.page import (
    Section,
    figure,
    fmt_num,
    fmt_pct,
    num_html,
    pct_html,
    shorten,
    table,
)
from evals.report.svg import Series, bar_chart

SECTION_ID = "memory"
MAX_MISSED_ITEMS = 100
"""Items with a missed slot listed in full (the rest are in results.jsonl)."""

Row = Mapping[str, Any]


def _dte_chart(lines: Sequence[Row]) -> str:
    counts = Counter(int(line["dte"]) for line in lines if line.get("dte") is not None)
    if not counts:
        return '<p class="note">No repair loop ran, so there is no DTE to plot.</p>'
    turns = list(range(1, max(counts) + 1))
    chart = bar_chart(
        [str(t) for t in turns],
        [Series("items", [float(counts.get(t, 0)) for t in turns])],
        title="Items by dialogue turn efficiency",
        horizontal=False,
        fmt=lambda v: f"{v:.0f}",
    )
    return figure(chart, "System turns from the confirmation on (1 = the confirmation was right)")


def _missed_rows(lines: Sequence[Row]) -> list[list[str]]:
    rows = []
    for line in lines:
        jga = (line.get("scores") or {}).get("jga")
        if jga is None or jga >= 1.0:
            continue
        goal = ", ".join(f"{k}={v}" for k, v in (line.get("task_goal") or {}).items())
        rows.append(
            [
                escape(str(line.get("eval_id"))),
                escape(str(line.get("intent"))),
                escape(shorten(goal, 160)),
                escape(shorten(line.get("response"), 200)),
                num_html(line.get("dte"), 0),
            ]
        )
    return rows


def memory_section(summary: Row, lines: Sequence[Row]) -> Section:
    """The report section of one memory run (see the module docstring)."""
    overview = [
        ("Recall@5", fmt_pct(summary.get("recall_at_5"))),
        ("slot accuracy", fmt_pct(summary.get("slot_accuracy"))),
        ("JGA", fmt_pct(summary.get("jga"))),
        ("DTE", fmt_num(summary.get("dte"))),
        ("S.R.", fmt_pct(summary.get("success_rate"))),
    ]
    judges = "; ".join(f"{role}: {spec}" for role, spec in (summary.get("judges") or {}).items())
    missed = _missed_rows(lines)
    body = [
        f'<p class="note">{escape(str(summary.get("items", 0)))} items. Judges: '
        f"{escape(judges)}.</p>",
        "<h3>Memory retrieval</h3>",
        table(
            ["Recall@3", "Recall@5", "Recall@10", "hit@5"],
            [
                [
                    pct_html(summary.get(k))
                    for k in ("recall_at_3", "recall_at_5", "recall_at_10", "hit_at_5")
                ]
            ],
        ),  # fmt: skip
        "<h3>Confirmation response</h3>",
        table(
            ["slot accuracy", "JGA", "BLEU", "ROUGE-L", "GPT-4 score"],
            [
                [
                    pct_html(summary.get("slot_accuracy")),
                    pct_html(summary.get("jga")),
                    num_html(summary.get("bleu")),
                    num_html(summary.get("rouge_l")),
                    num_html(summary.get("gpt4_score")),
                ]
            ],
        ),
        f'<p class="note">{escape(str(summary.get("gpt4_score_reason") or ""))}</p>',
        "<h3>Proactive slot repair</h3>",
        table(
            ["repair loops", "DTE", "S.R."],
            [
                [
                    num_html(summary.get("repair_loops"), 0),
                    num_html(summary.get("dte")),
                    pct_html(summary.get("success_rate")),
                ]
            ],
        ),
        _dte_chart(lines),
        f"<h3>Items whose confirmation missed a gold slot ({len(missed)})</h3>",
        table(["item", "intent", "gold slots", "confirmation", "DTE"], missed[:MAX_MISSED_ITEMS])
        if missed
        else '<p class="note">Every confirmation stated every gold slot.</p>',
    ]
    return Section(SECTION_ID, "Memory and slot repair (MAP / MS-TOD)", overview, "".join(body))


ABLATION_FIGURES = (
    "recall_at_3",
    "recall_at_5",
    "recall_at_10",
    "slot_accuracy",
    "jga",
    "dte",
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
