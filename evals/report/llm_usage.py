"""The report's account of the LLM judges: calls, tokens, failures and latency per role.

Drawn by ``llm_usage.html.j2``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from todeval.evals.metrics.llm_usage import role_rows
from todeval.evals.report.page import Section, fmt_num
from todeval.evals.report.templating import render

SECTION_ID = "llm-usage"
_COUNTS = ("invocations", "cache_hits", "sent", "refused", "failed", "retries", "prompt_tokens",
           "completion_tokens")  # fmt: skip


def llm_usage_section(summary: Mapping[str, Any]) -> Section | None:
    """One row per LLM judge role, and the records whose calls went unanswered (None: no LLM)."""
    usage = summary.get("llm_usage") or {}
    if not usage:
        return None
    rows = role_rows(usage)
    cells = [
        [str(row["role"]), *(fmt_num(row[key]) for key in _COUNTS),
         fmt_num(row["mean_latency_s"], 3)]
        for row in rows
    ]  # fmt: skip
    spent = summary.get("llm_spent") or {}
    body = render(
        "llm_usage.html.j2",
        rows=cells,
        calls=str(spent.get("calls", 0)),
        cost=f"{spent['cost_usd']:.4f}" if spent.get("cost_usd") else None,
        unanswered=(summary.get("unanswered_records") or {}).get("count", 0),
    )
    failed = sum(row["failed"] for row in rows)
    return Section(
        id=SECTION_ID,
        title="LLM judges: calls and cost",
        overview=[("LLM calls", str(spent.get("calls", 0))), ("null LLM labels", str(failed))],
        content=body,
    )
