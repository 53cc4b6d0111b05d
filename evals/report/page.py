"""The report page: a title, run metadata, an overview, a table of contents and sections.

Each subsystem contributes a :class:`Section` (its anchor id, title, headline figures for the
overview and a body its own template rendered from data); :func:`render_report` puts them on
one static, offline page (``page.html.j2``) with inline CSS and no script. Every value reaches
the page through an autoescaping Jinja2 template (:mod:`evals.report.templating`).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from markupsafe import Markup

from todeval.evals.outputs import write_text_atomically
from todeval.evals.report.formatting import MISSING, anchor_id, as_number, fmt_num, fmt_pct, shorten
from todeval.evals.report.templating import Rendered, macro, render_pieces

__all__ = [
    "MISSING",
    "Section",
    "anchor_id",
    "as_number",
    "fmt_num",
    "fmt_pct",
    "num_html",
    "pct_html",
    "render_report",
    "shorten",
    "skipped_records_html",
    "table",
    "value_html",
    "write_report",
]

_SAFE_ID = re.compile(r"[A-Za-z][A-Za-z0-9_-]*\Z")
_RESERVED_IDS = frozenset({"report-overview", "report-contents", "report-meta"})


@dataclass(frozen=True)
class Section:
    """One part of the report, contributed by one subsystem.

    Attributes:
        id: Anchor id of the section (a letter, then letters, digits, ``-`` or ``_``); ids the
            section's body creates should start with it, so that sections never clash.
        title: Heading of the section and its entry in the table of contents.
        overview: Headline figures ``(label, formatted value)`` shown in the overview at the top;
            a value equal to :data:`MISSING` is shown as not computed.
        content: The section's HTML as its template rendered it from data
            (:func:`evals.report.templating.render`), or its template and data to render
            when the page is written (:class:`~evals.report.templating.Rendered`); a plain
            ``str`` is shown as text.
        lead: HTML shown in the overview above its cards, on the first screen (the figures
            with how far each can be trusted); None: none.
    """

    id: str
    title: str
    overview: list[tuple[str, str]]
    content: str | Rendered
    lead: Markup | None = None

    @property
    def body(self) -> str:
        """The section's HTML as one string (a plain ``str`` content stays text)."""
        return self.content if isinstance(self.content, str) else self.content.html

    def pieces(self) -> Iterator[str]:
        """The body as the page writes it: a rendered one in its template's pieces."""
        return iter([self.content]) if isinstance(self.content, str) else self.content.pieces()


def render_report(
    title: str, sections: Sequence[Section], *, meta: Mapping[str, str] | None = None
) -> str:
    """The whole report as one self-contained HTML document (``meta``: facts shown as a table).

    Raises:
        ValueError: If a section id is not a safe anchor, is reserved, or is used twice.
    """
    return "".join(_report_pieces(title, sections, meta=meta))


def _report_pieces(
    title: str, sections: Sequence[Section], *, meta: Mapping[str, str] | None = None
) -> Iterator[str]:
    """:func:`render_report`'s text in pieces, as the page template renders it."""
    seen: set[str] = set()
    for section in sections:
        if not _SAFE_ID.match(section.id) or section.id in _RESERVED_IDS or section.id in seen:
            raise ValueError(f"section id {section.id!r} is unsafe, reserved or duplicated")
        seen.add(section.id)
    yield from render_pieces("page.html.j2", title=title, sections=sections, meta=meta or {})
    yield "\n"


def write_report(
    path: Path, title: str, sections: Sequence[Section], *, meta: Mapping[str, str] | None = None
) -> None:
    """Render the report (see :func:`render_report`) and write it to ``path`` as UTF-8.

    Raises:
        ValueError: If a section id is not a safe anchor, is reserved, or is used twice.
    """
    pieces = _report_pieces(title, sections, meta=meta)
    first = next(pieces)  # a bad section id raises before any file is touched
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomically(path, itertools.chain([first], pieces))  # never one string (issue 32)


# The template macros, callable from Python for a section that is not on a template of its own
# yet; each escapes what it is given (text) and keeps what is already Markup.


def value_html(text: str) -> Markup:
    """Escaped text, or a marked :data:`MISSING` whose tooltip says it could not be computed."""
    return macro("value")(text)


def pct_html(value: Any, digits: int = 1) -> Markup:
    """A cell for a fraction: :func:`fmt_pct`, escaped, :data:`MISSING` marked."""
    return macro("pct")(value, digits)


def num_html(value: Any, digits: int = 2) -> Markup:
    """A cell for a number: :func:`fmt_num`, escaped, :data:`MISSING` marked."""
    return macro("num")(value, digits)


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], *, cls: str = "data") -> Markup:
    """An HTML table; headers and text cells are escaped, Markup cells are kept."""
    return macro("table")(headers, rows, cls)


def skipped_records_html(summary: Mapping[str, Any]) -> Markup:
    """A table of the run's skipped records and failed dialogues (empty when there are none)."""
    return macro("skipped_records")(summary)
