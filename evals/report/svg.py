"""Bar and line charts as inline SVG, built with the standard library only.

A value that could not be computed (``None``) is never drawn as 0: a bar gets ``n/a``, a line
breaks. Bars start at 0, so negative values (kappa below chance) extend the other way. The
charts only place shapes (:mod:`evals.report.svg_shapes`); ``svg.svg.j2`` writes them, escaped.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from markupsafe import Markup

from todeval.evals.report.svg_shapes import (
    Circle,
    Group,
    Line,
    Polyline,
    Rect,
    Shape,
    Swatch,
    Text,
    svg_document,
)

PALETTE: tuple[str, ...] = ("#3b6fb6", "#e0892b", "#4f9a4a", "#8d5ba6", "#c44e4b", "#6c7a89")
"""Series colours, in order (colour-blind friendly enough and readable in greyscale print)."""

_CHAR_W = 6.6  # rough width of one character at 12px in a sans-serif font
_BAR = 18  # thickness of one bar
_GAP = 10  # space between two categories
_LEGEND_H = 22


@dataclass(frozen=True)
class Series:
    """One set of bars: a value per category (``None``: not computed)."""

    name: str
    values: Sequence[float | None]
    labels: Sequence[str] | None = None
    color: str | None = None


def _plain(value: float) -> str:
    return f"{value:.3g}"


def nice_ticks(lo: float, hi: float, target: int = 5) -> list[float]:
    """Round ticks (1, 2, 2.5 or 5 times a power of ten) covering ``[lo, hi]``, about ``target``."""
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


def _check_lengths(series: Sequence[Series], n: int, per: str) -> None:
    for s in series:
        if len(s.values) != n or (s.labels and len(s.labels) != n):
            raise ValueError(f"series {s.name!r} needs one value per {per}")


def svg_text(x: float, y: float, text: str, *, anchor: str = "start", cls: str = "") -> Text:
    """A text at (x, y); ``cls="na"`` draws it grey and italic."""
    return Text(x, y, text, anchor, na=cls == "na")


def clip_label(text: str, chars: int) -> str:
    """``text`` cut to ``chars`` characters with an ellipsis."""
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
) -> Markup:
    """An SVG bar chart, one bar per category and series (grouped, with a legend, when several).

    ``domain`` defaults to min(0, values)..max(0, values) widened to round ticks; ``fmt``
    formats bar labels and ticks.

    Raises:
        ValueError: If a series does not have one value (and label) per category.
    """
    _check_lengths(series, len(categories), "category")
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
    parts: list[Shape] = []
    for t in ticks:
        (x1, y1), (x2, y2) = at(pos(t), axis_start), at(pos(t), axis_end)
        parts.append(Line(x1, y1, x2, y2, "#999" if t == 0 else "#e3e3e3"))
        tx, ty = (pos(t), axis_end + 12) if horizontal else (start - 6, pos(t))
        parts.append(svg_text(tx, ty, fmt(t), anchor="middle" if horizontal else "end"))
    for i, category in enumerate(categories):
        group = first_band + i * band
        if horizontal:
            cx, cy, chars = cat_w - 8, group + len(series) * thickness / 2, cat_w / _CHAR_W
        else:
            cx, cy, chars = start + (i + 0.5) * band, pos(lo) + 14, band / _CHAR_W
        clipped = svg_text(
            cx, cy, clip_label(category, int(chars)), anchor="end" if horizontal else "middle"
        )
        parts.append(Group([clipped], title=category))
        for k, s in enumerate(series):
            value, middle = s.values[i], group + (k + 0.5) * thickness
            away = 1 if horizontal else -1  # the direction of growing values on screen
            if value is None:
                x, y = at(pos(0) + away * (4 if horizontal else 9), middle)
                parts.append(
                    svg_text(x, y, "n/a", anchor="start" if horizontal else "middle", cls="na")
                )
                continue
            a0, a1 = sorted((pos(0), pos(value)))
            x, y = at(a0, group + k * thickness + 1)
            w, h = at(a1 - a0, thickness - 2)
            tip = f"{category} · {s.name}: {labels[k][i]}"
            parts.append(Rect(x, y, w, h, colors[k], title=tip))
            outward = away if value >= 0 else -away
            x, y = at(pos(value) + outward * (4 if horizontal else 9), middle)
            anchor = ("start" if outward > 0 else "end") if horizontal else "middle"
            parts.append(svg_text(x, y, labels[k][i], anchor=anchor))
    if len(series) > 1:
        parts.extend(legend([s.name for s in series], colors))
    return svg_document(parts, title=title, width=width, height=height)


def legend(names: Sequence[str], colors: Sequence[str]) -> list[Shape]:
    """Swatches and names in a row along the top edge."""
    parts: list[Shape] = []
    x = 4.0
    for name, color in zip(names, colors, strict=True):
        parts += [Swatch(x, color), svg_text(x + 16, 11, name)]
        x += 16 + len(name) * _CHAR_W + 18
    return parts


def line_chart(
    xs: Sequence[float],
    series: Sequence[Series],
    *,
    title: str,
    domain: tuple[float, float] | None = None,
    x_domain: tuple[float, float] | None = None,
    fmt: Callable[[float], str] = _plain,
    x_fmt: Callable[[float], str] = _plain,
    width: int = 680,
    plot_height: int = 200,
) -> Markup:
    """An SVG line chart: one line per series over shared x positions, a dot at each point.

    A ``None`` value gets no dot and breaks its line. Domains default as in
    :func:`bar_chart`; ``fmt`` and ``x_fmt`` format y and x values.

    Raises:
        ValueError: If a series does not have one value (and label) per x.
    """
    _check_lengths(series, len(xs), "x")
    y_ticks = _domain(series, domain)
    xlo, xhi = x_domain or (min(xs, default=0.0), max(xs, default=1.0))
    x_ticks = nice_ticks(xlo, xhi if xhi > xlo else xlo + 1.0)
    colors = [s.color or PALETTE[i % len(PALETTE)] for i, s in enumerate(series)]
    top = _LEGEND_H + 6 if len(series) > 1 else 8
    left = max(len(fmt(t)) for t in y_ticks) * _CHAR_W + 16
    right, bottom = width - 16, top + plot_height

    def px(x: float) -> float:
        return left + (x - x_ticks[0]) / (x_ticks[-1] - x_ticks[0]) * (right - left)

    def py(y: float) -> float:
        return bottom - (y - y_ticks[0]) / (y_ticks[-1] - y_ticks[0]) * plot_height

    parts: list[Shape] = []
    for t in y_ticks:
        colour = "#999" if t == y_ticks[0] else "#e3e3e3"
        parts.append(Line(left, py(t), right, py(t), colour))
        parts.append(svg_text(left - 6, py(t), fmt(t), anchor="end"))
    for t in x_ticks:
        parts.append(Line(px(t), top, px(t), bottom, "#f0f0f0"))
        parts.append(svg_text(px(t), bottom + 12, x_fmt(t), anchor="middle"))
    radius, dots = (3.5 if len(xs) <= 30 else 2.0), list[Shape]()
    for s, color in zip(series, colors, strict=True):
        runs: list[list[tuple[float, float]]] = [[]]  # consecutive values, split at each None
        for j, (x, value) in enumerate(zip(xs, s.values, strict=True)):
            if value is None:
                runs.append([])
                continue
            runs[-1].append((px(x), py(value)))
            tip = f"{x_fmt(x)} · {s.name}: {s.labels[j] if s.labels else fmt(value)}"
            dots.append(Circle(px(x), py(value), radius, color, title=tip))
        parts.extend(Polyline(run, color) for run in runs if len(run) > 1)
    parts.extend(dots)
    if not dots:
        middle = (left + right) / 2, top + plot_height / 2
        parts.append(svg_text(*middle, "n/a", anchor="middle", cls="na"))
    if len(series) > 1:
        parts.extend(legend([s.name for s in series], colors))
    return svg_document(parts, title=title, width=width, height=bottom + 24)
