"""Bar charts as inline SVG, built with the standard library only.

One function draws horizontal or vertical bars, one series or several grouped per category,
with a value label on every bar, an axis with round ticks and a legend when there is more than
one series. A value that could not be computed (``None``) gets no bar and an ``n/a`` label at the
baseline: it is never drawn as 0. Bars start at 0, so negative values (a Cohen's kappa below
chance) extend the other way. Every text is escaped; the SVG is meant to be embedded in HTML.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

PALETTE: tuple[str, ...] = ("#3b6fb6", "#e0892b", "#4f9a4a", "#8d5ba6", "#c44e4b", "#6c7a89")
"""Series colours, in order (colour-blind friendly enough and readable in greyscale print)."""

_FONT = 12
_CHAR_W = 6.6  # rough width of one character at 12px in a sans-serif font
_BAR = 18  # thickness of one bar
_GAP = 10  # space between two categories
_LEGEND_H = 22


@dataclass(frozen=True)
class Series:
    """One set of bars: a value per category.

    Attributes:
        name: Shown in the legend (when there are several series) and in tooltips.
        values: One value per category; ``None`` when it could not be computed.
        labels: The text printed at each bar; by default the chart's ``fmt`` of the value.
        color: Fill colour; by default the next colour of :data:`PALETTE`.
    """

    name: str
    values: Sequence[float | None]
    labels: Sequence[str] | None = None
    color: str | None = None


def _plain(value: float) -> str:
    return f"{value:.3g}"


def nice_ticks(lo: float, hi: float, target: int = 5) -> list[float]:
    """Round tick positions covering ``[lo, hi]``, about ``target`` of them.

    Args:
        lo: Lower end of the domain.
        hi: Upper end of the domain (greater than ``lo``).
        target: The number of intervals wanted.

    Returns:
        Multiples of 1, 2, 2.5 or 5 times a power of ten, from the first at or below ``lo`` to
        the first at or above ``hi``.
    """
    raw = (hi - lo) / max(target, 1)
    magnitude = 10.0 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1.0, 2.0, 2.5, 5.0, 10.0) if m * magnitude >= raw * 0.999)
    first = math.floor(lo / step + 1e-9)
    last = math.ceil(hi / step - 1e-9)
    return [round(i * step, 10) for i in range(first, last + 1)]


def _domain(series: Sequence[Series], domain: tuple[float, float] | None) -> list[float]:
    if domain is not None:
        return nice_ticks(*domain) if domain[1] > domain[0] else [domain[0], domain[0] + 1]
    values = [v for s in series for v in s.values if v is not None and math.isfinite(v)]
    lo, hi = min([0.0, *values]), max([0.0, *values])
    return nice_ticks(lo, hi if hi > lo else lo + 1.0)


def _text(x: float, y: float, text: str, *, anchor: str = "start", cls: str = "") -> str:
    style = ' fill="#888" font-style="italic"' if cls == "na" else ""
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" '
        f'dominant-baseline="central"{style}>{escape(text)}</text>'
    )


def _clip(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[: max(chars - 1, 1)] + "…"


def bar_chart(
    categories: Sequence[str],
    series: Sequence[Series],
    *,
    title: str,
    horizontal: bool = True,
    domain: tuple[float, float] | None = None,
    fmt: Callable[[float], str] = _plain,
    width: int = 680,
    plot_height: int = 220,
) -> str:
    """An SVG bar chart, one bar per category and series.

    Args:
        categories: The category names, in display order (top to bottom, or left to right).
        series: One or more series; several are drawn as grouped bars with a legend.
        title: Accessible name of the chart (``<title>``), also used in tooltips.
        horizontal: Bars grow to the right (True) or upwards (False).
        domain: The value axis range; by default from min(0, values) to max(0, values),
            widened to round ticks.
        fmt: Formats values for bar labels (when a series has no ``labels``) and axis ticks.
        width: Width of the SVG in pixels (it scales down with the page).
        plot_height: Height of the plot area of a vertical chart.

    Returns:
        The ``<svg>`` element as a string.

    Raises:
        ValueError: If a series does not have one value (and label) per category.
    """
    for s in series:
        if len(s.values) != len(categories) or (s.labels and len(s.labels) != len(categories)):
            raise ValueError(f"series {s.name!r} needs one value per category")
    ticks = _domain(series, domain)
    lo, hi = ticks[0], ticks[-1]
    colors = [s.color or PALETTE[i % len(PALETTE)] for i, s in enumerate(series)]
    labels = [
        [
            ("n/a" if v is None else (s.labels[j] if s.labels else fmt(v)))
            for j, v in enumerate(s.values)
        ]
        for s in series
    ]
    label_chars = max((len(t) for row in labels for t in row), default=3)
    top = _LEGEND_H if len(series) > 1 else 4
    start: float
    span: float
    band: float
    cat_w = 0.0
    if horizontal:  # categories down the left, values along x
        cat_w = min(max((len(c) for c in categories), default=4) * _CHAR_W + 10, 260)
        value_w = label_chars * _CHAR_W + 8
        start = cat_w + (value_w if lo < 0 else 0)
        span = max(width - start - value_w - 8, 80.0)
        thickness, band = float(_BAR), float(len(series) * _BAR + _GAP)
        first_band = top + _GAP / 2
        height = top + len(categories) * band + 28
    else:  # categories along the bottom, values up the left
        start = max(len(fmt(t)) for t in ticks) * _CHAR_W + 16
        band = (width - start - 8) / max(len(categories), 1)
        thickness = min((band - _GAP) / len(series), 60)
        first_band = start + (band - thickness * len(series)) / 2
        span, height = plot_height, top + 16 + plot_height + 24

    def pos(value: float) -> float:
        if horizontal:
            return start + (value - lo) / (hi - lo) * span
        return top + 16 + (hi - value) / (hi - lo) * span

    def at(along: float, across: float) -> tuple[float, float]:
        """(x, y) of a point ``along`` the value axis and ``across`` the category axis."""
        return (along, across) if horizontal else (across, along)

    axis_end = top + len(categories) * band if horizontal else start + len(categories) * band
    axis_start = top if horizontal else start
    parts: list[str] = []
    for t in ticks:
        (x1, y1), (x2, y2) = at(pos(t), axis_start), at(pos(t), axis_end)
        colour = "#999" if t == 0 else "#e3e3e3"
        parts.append(
            f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{colour}"/>'
        )
        tx, ty = (pos(t), axis_end + 12) if horizontal else (start - 6, pos(t))
        parts.append(_text(tx, ty, fmt(t), anchor="middle" if horizontal else "end"))
    for i, category in enumerate(categories):
        group = first_band + i * band
        if horizontal:
            cx, cy, chars = cat_w - 8, group + len(series) * thickness / 2, cat_w / _CHAR_W
        else:
            cx, cy, chars = start + (i + 0.5) * band, pos(lo) + 14, band / _CHAR_W
        clipped = _text(
            cx, cy, _clip(category, int(chars)), anchor="end" if horizontal else "middle"
        )
        parts.append(f"<g><title>{escape(category)}</title>{clipped}</g>")
        for k, s in enumerate(series):
            value, middle = s.values[i], group + (k + 0.5) * thickness
            away = 1 if horizontal else -1  # the direction of growing values on screen
            if value is None:
                x, y = at(pos(0) + away * (4 if horizontal else 9), middle)
                parts.append(
                    _text(x, y, "n/a", anchor="start" if horizontal else "middle", cls="na")
                )
                continue
            a0, a1 = sorted((pos(0), pos(value)))
            x, y = at(a0, group + k * thickness + 1)
            w, h = at(a1 - a0, thickness - 2)
            tip = escape(f"{category} · {s.name}: {labels[k][i]}")
            parts.append(
                f'<rect x="{x:.2f}" y="{y:.2f}" width="{w:.2f}" height="{h:.2f}" '
                f'fill="{colors[k]}"><title>{tip}</title></rect>'
            )
            outward = away if value >= 0 else -away
            x, y = at(pos(value) + outward * (4 if horizontal else 9), middle)
            anchor = ("start" if outward > 0 else "end") if horizontal else "middle"
            parts.append(_text(x, y, labels[k][i], anchor=anchor))
    if len(series) > 1:
        x = 4.0
        for s, color in zip(series, colors, strict=True):
            parts.append(f'<rect x="{x:.1f}" y="5" width="12" height="12" fill="{color}"/>')
            parts.append(_text(x + 16, 11, s.name))
            x += 16 + len(s.name) * _CHAR_W + 18
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" width="{width}" '
        f'height="{height:.0f}" viewBox="0 0 {width} {height:.0f}" font-size="{_FONT}" '
        f'font-family="system-ui, sans-serif" fill="#222"><title>{escape(title)}</title>'
        + "".join(parts)
        + "</svg>"
    )
