"""The shapes an SVG chart is drawn with: plain data that ``svg.svg.j2`` turns into markup.

A chart computes where things go (numbers) and what they say (text); the template writes the
elements, escaping every text and attribute, so no chart ever builds markup itself. The
result of :func:`svg_document` is the only kind of ready HTML a chart hands on: a Markup the
engine rendered.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from markupsafe import Markup

from todeval.evals.report.templating import render


@dataclass(frozen=True)
class Text:
    """A text at (x, y); ``na`` draws it grey and italic (a value that could not be computed)."""

    kind: ClassVar[str] = "text"
    x: float
    y: float
    text: str
    anchor: str = "start"
    na: bool = False


@dataclass(frozen=True)
class Line:
    """A straight line, optionally dashed (``dash``, an SVG dash array) or thicker."""

    kind: ClassVar[str] = "line"
    x1: float
    y1: float
    x2: float
    y2: float
    stroke: str
    width: float | None = None
    dash: str | None = None


@dataclass(frozen=True)
class Rect:
    """A rectangle with an optional tooltip, CSS class and ``data-status``."""

    kind: ClassVar[str] = "rect"
    x: float
    y: float
    width: float
    height: float
    fill: str
    title: str | None = None
    stroke: str | None = None
    cls: str | None = None
    status: str | None = None


@dataclass(frozen=True)
class Swatch:
    """A legend's 12 px colour square at ``x`` along the top edge."""

    kind: ClassVar[str] = "swatch"
    x: float
    fill: str


@dataclass(frozen=True)
class Circle:
    """A dot with an optional tooltip."""

    kind: ClassVar[str] = "circle"
    cx: float
    cy: float
    r: float
    fill: str
    title: str | None = None


@dataclass(frozen=True)
class Polyline:
    """An unfilled line through ``points``."""

    kind: ClassVar[str] = "polyline"
    points: Sequence[tuple[float, float]]
    stroke: str
    width: float = 2


@dataclass(frozen=True)
class Polygon:
    """A filled polygon through ``points`` (an arrow head)."""

    kind: ClassVar[str] = "polygon"
    points: Sequence[tuple[float, float]]
    fill: str


@dataclass(frozen=True)
class Group:
    """Shapes sharing a tooltip (``title``) and an optional CSS class."""

    kind: ClassVar[str] = "group"
    children: Sequence[Shape]
    title: str | None = None
    cls: str | None = None


Shape = Text | Line | Rect | Swatch | Circle | Polyline | Polygon | Group


def svg_document(shapes: Sequence[Shape], *, title: str, width: float, height: float) -> Markup:
    """The chart's ``<svg>`` element drawing ``shapes``, with an accessible title."""
    return render("svg.svg.j2", shapes=shapes, title=title, width=width, height=height)
