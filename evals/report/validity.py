"""Who decided a figure, how far that judge agrees with people, and its floor, as shown.

Reads a summary's ``validity`` entries; a figure decided by a weak or unchecked judge is named
on the report's first screen. ``_validity.html.j2`` draws it. A figure's ``floors`` entry (what
do-nothing agents reach, :mod:`nodes.judges.floors`) is shown beside it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from todeval.evals.metrics.record_metrics import METRICS
from todeval.evals.report.formatting import fmt_num, fmt_pct

Row = Mapping[str, Any]


def _headline(card: Row) -> str:
    """The card's first check on human labels: kappa, recall and where."""
    checks = [c for c in card.get("checks") or [] if c.get("human")] or card.get("checks") or []
    if not checks:
        return "no check"
    check = checks[0]
    parts = []
    if check.get("kappa") is not None:
        parts.append(f"κ {check['kappa']:.2f}")
    if check.get("recall") is not None:
        parts.append(f"{card.get('positive', 'positive')} recall {check['recall']:.2f}")
    if check.get("coverage") is not None:
        parts.append(f"coverage {check['coverage']:.0%}")
    return f"{', '.join(parts)} on {check['data']} (n={check['n']})"


def validity_view(entry: Row | None) -> dict[str, Any]:
    """One figure's judges for the ``decided_by`` macro: a note, or each judge's card headline."""
    if not entry:
        return {"note": ""}
    if not entry.get("judges"):
        return {"note": str(entry.get("note", ""))}
    judges = [
        {"spec": str(spec), "weak": bool(card and card.get("weak")),
         "headline": _headline(card) if card is not None else None}
        for spec, card in (entry.get("cards") or {}).items()
    ]  # fmt: skip
    return {"judges": judges}


def validity_warnings(validity: Row, values: Row) -> dict[str, list[str]]:
    """The labels of shown figures decided by weak judges, and by judges never checked."""
    shown = [name for name in METRICS if name in values and name in validity]
    weak = [METRICS[name].label for name in shown if validity[name].get("weak")]
    unchecked = [
        METRICS[name].label
        for name in shown
        if validity[name].get("unchecked") and not validity[name].get("weak")
    ]
    return {"weak": weak, "unchecked": unchecked}


def floor_text(floor: Row | None, *, fraction: bool = True) -> str:
    """A figure's do-nothing floor: ``"0.0 % (floor:parrot, banking)"``; empty without one."""
    if not floor:
        return ""
    if floor.get("value") is None:
        return f"n/a ({floor.get('reason') or 'no floor agent has a value'})"
    value = fmt_pct(floor["value"]) if fraction else fmt_num(floor["value"])
    return f"{value} ({floor.get('agent')}, {floor.get('place')})"


def floor_basis(floors: Row) -> str:
    """How the floors of a summary were measured (one phrase), or empty without floors."""
    bases = {str(f.get("basis")) for f in floors.values() if f and f.get("basis")}
    return "; ".join(sorted(bases))
