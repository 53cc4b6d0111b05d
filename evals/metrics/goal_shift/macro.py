"""Macro averages of the goal-shift figures over a breakdown's groups (paper 002, Section 4.3).

The paper reports "macro-averages of TUE, GSRT, and retention/drop statistics across tasks and
personas" beside Table 10's pooled figures, where a group with many calls or conversations
dominates. A macro average is the mean over a breakdown's groups of each group's own pooled
figure; a group where a figure is undefined is left out (``groups_defined`` counts them).
"""

from __future__ import annotations

from collections.abc import Mapping
from statistics import fmean
from typing import Any

from todeval.evals.metrics.goal_shift.task_success import TSR_CHANNELS

MACRO_FIGURES: tuple[str, ...] = (
    "tsr",
    "tue",
    "tool_correctness",
    "param_validity",
    "tcrr",
    "tcrr_window",
    "tcrr_batch",
)
"""Top-level figures averaged over groups."""

MACRO_GSRT: tuple[str, ...] = (
    "recovery_rate",
    "transfer_rate",
    "median_ack",
    "median_tool",
    "median_outcome",
)
"""GSRT figures averaged over groups (a median latency's mean over groups)."""


def _mean(values: list[float]) -> float | None:
    return fmean(values) if values else None


def macro_average(groups: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Each figure's unweighted mean over the groups' own (pooled) summaries."""
    members = list(groups.values())
    defined: dict[str, int] = {}

    def average(name: str, values: list[Any]) -> float | None:
        present = [float(v) for v in values if v is not None]
        defined[name] = len(present)
        return _mean(present)

    result: dict[str, Any] = {"groups": len(members)}
    for key in MACRO_FIGURES:
        result[key] = average(key, [m.get(key) for m in members])
    result["tsr_channels"] = {
        name: average(
            f"tsr_channels.{name}", [(m.get("tsr_channels") or {}).get(name) for m in members]
        )
        for name in TSR_CHANNELS
    }
    result["gsrt"] = {
        name: average(f"gsrt.{name}", [(m.get("gsrt") or {}).get(name) for m in members])
        for name in MACRO_GSRT
    }
    result["groups_defined"] = defined
    return result


#: The rows of :func:`pooled_macro_table`: label and path into a summary.
TABLE_ROWS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("TSR", ("tsr",)),
    ("  communicate_info", ("tsr_channels", "communicate_info")),
    ("  action", ("tsr_channels", "action")),
    ("  nl_assertion", ("tsr_channels", "nl_assertion")),
    ("TUE", ("tue",)),
    ("  tool correctness T", ("tool_correctness",)),
    ("  parameter validity P", ("param_validity",)),
    ("TCRR", ("tcrr",)),
    ("GSRT recovery rate", ("gsrt", "recovery_rate")),
    ("GSRT transfer rate", ("gsrt", "transfer_rate")),
    ("GSRT median ack", ("gsrt", "median_ack")),
    ("GSRT median tool", ("gsrt", "median_tool")),
    ("GSRT median outcome", ("gsrt", "median_outcome")),
)


def _at(figures: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = figures
    for key in path:
        value = value.get(key) if isinstance(value, Mapping) else None
    return value


def pooled_macro_table(summary: Mapping[str, Any]) -> str:
    """Pooled figures beside each breakdown's macro average, as a text table."""
    macro: Mapping[str, Any] = summary.get("macro") or {}
    names = list(macro)
    header = f"{'figure':24}{'pooled':>10}" + "".join(
        f"{name.removeprefix('by_') + ' (' + str(macro[name]['groups']) + ')':>20}"
        for name in names
    )
    lines = [header]
    for label, path in TABLE_ROWS:
        cells = [_at(summary, path), *(_at(macro[name], path) for name in names)]
        widths = [10, *([20] * len(names))]
        lines.append(
            f"{label:24}"
            + "".join(
                f"{'n/a' if v is None else f'{v:.4f}':>{w}}"
                for v, w in zip(cells, widths, strict=True)
            )
        )
    return "\n".join(lines)
