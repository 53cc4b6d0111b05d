"""MAP's comparison as a text table: one setting per row (``todeval memory eval --baselines``).

Each row is a memory run's summary (:func:`~evals.metrics.memory.scores.memory_summary`) with
``configuration`` and ``paper`` (where the paper has the setting). A figure no judge could give
prints ``n/a``; the row's commonest reason (``reasons``) is printed under the table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

COLUMNS: tuple[tuple[str, str], ...] = (
    ("R@5", "recall_at_5"),
    ("slot acc", "slot_accuracy"),
    ("JGA", "jga"),
    ("JGA mention", "jga_mention"),
    ("DTE", "dte"),
    ("S.R.", "success_rate"),
    ("GPT-4", "gpt4_score"),
    ("slot ceil", "slot_ceiling"),
)
"""Header and summary key of each figure column."""


def _cell(value: Any) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def null_reasons(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """``"configuration: reason"`` for each row without figures (its commonest reason)."""
    return [
        f"{row.get('configuration')}: {row['reasons'][0]['reason']}"
        for row in rows
        if row.get("slot_accuracy") is None and row.get("reasons")
    ]


def baseline_table(rows: Sequence[Mapping[str, Any]], *, title: str = "") -> str:
    """The summaries as a fixed-width table, then each null row's reason."""
    width = max([len(str(row.get("configuration", ""))) for row in rows] + [13])
    header = f"{'configuration':{width}} {'items':>5}" + "".join(
        f" {name:>11}" for name, _ in COLUMNS
    )
    lines = [title] if title else []
    lines.append(header)
    for row in rows:
        cells = "".join(f" {_cell(row.get(key)):>11}" for _, key in COLUMNS)
        lines.append(f"{row.get('configuration', ''):{width}} {row.get('items', 0):>5}{cells}")
    notes = null_reasons(rows)
    if notes:
        lines += ["n/a because:", *(f"  {note}" for note in notes)]
    return "\n".join(lines)
