"""Who decided a figure and how far that judge agrees with people, as the report shows it.

Reads the ``validity`` entries of a summary (``graphs.corpus.validity.figure_validity``): per
figure its judges and their validity cards. A figure decided by a weak judge, or by one that was
never checked against labels, is named on the report's first screen.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

from evals.metrics.record_metrics import METRICS

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


def validity_html(entry: Row | None) -> str:
    """One figure's judges and their cards' headline figures, weak ones marked."""
    if not entry:
        return ""
    if not entry.get("judges"):
        return escape(str(entry.get("note", "")))
    items = []
    for spec, card in (entry.get("cards") or {}).items():
        if card is None:
            items.append(f"<b>{escape(spec)}</b>: not checked against labels")
            continue
        flag = ' <span class="bad">weak</span>' if card.get("weak") else ""
        items.append(f"<b>{escape(spec)}</b>{flag}: {escape(_headline(card))}")
    return "<br>".join(items)


def validity_warning_html(validity: Row, values: Row) -> str:
    """A warning naming the figures decided by weak or unchecked judges (empty if none)."""
    shown = [name for name in METRICS if name in values and name in validity]
    weak = [METRICS[name].label for name in shown if validity[name].get("weak")]
    unchecked = [
        METRICS[name].label
        for name in shown
        if validity[name].get("unchecked") and not validity[name].get("weak")
    ]
    parts = []
    if weak:
        parts.append(
            "<b>Decided by judges that agree poorly with people</b> (their cards below): "
            + escape(", ".join(weak))
            + ". Read these figures as rough."
        )
    if unchecked:
        parts.append(
            "<b>Decided by judges not checked against labels</b> (an LLM, or a local judge "
            "without a card yet): " + escape(", ".join(unchecked)) + "."
        )
    return "".join(f'<p class="warn">{part}</p>' for part in parts)
