"""The report page: a title, run metadata, an overview, a table of contents and sections.

Each subsystem contributes a :class:`Section` (its anchor id, title, headline figures for the
overview and an HTML body it built itself); :func:`render_report` puts them on one static,
offline page with inline CSS and no script. The small helpers here (number formatting, escaped
cells, tables, safe anchor ids) are what sections build their bodies with.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any

from evals.outputs import write_text_atomically

MISSING = "—"
"""How a figure that could not be computed is shown (never as 0)."""

_MISSING_TITLE = "could not be computed"
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
        body: Trusted HTML built by the section, with every piece of data text already escaped.
    """

    id: str
    title: str
    overview: list[tuple[str, str]]
    body: str


def as_number(value: Any) -> float | None:
    """``value`` as a float, or None when it is not a finite number (``None``, NaN, text, bool)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def fmt_pct(value: Any, digits: int = 1) -> str:
    """A fraction in 0..1 as a percentage (``0.634`` -> ``63.4%``); else :data:`MISSING`."""
    number = as_number(value)
    return MISSING if number is None else f"{number * 100:.{digits}f}%"


def fmt_num(value: Any, digits: int = 2) -> str:
    """A number with ``digits`` decimals (integers as they are); :data:`MISSING` if not a number."""
    number = as_number(value)
    if number is None:
        return MISSING
    return str(value) if isinstance(value, int) else f"{number:.{digits}f}"


def value_html(text: str) -> str:
    """Escaped text, or a marked :data:`MISSING` whose tooltip says it could not be computed."""
    if text == MISSING:
        return f'<span class="na" title="{_MISSING_TITLE}">{MISSING}</span>'
    return escape(text)


def pct_html(value: Any, digits: int = 1) -> str:
    """A table cell for a fraction: :func:`fmt_pct`, escaped, :data:`MISSING` marked."""
    return value_html(fmt_pct(value, digits))


def num_html(value: Any, digits: int = 2) -> str:
    """A table cell for a number: :func:`fmt_num`, escaped, :data:`MISSING` marked."""
    return value_html(fmt_num(value, digits))


def shorten(text: Any, limit: int) -> str:
    """``text`` on one line (``None`` as empty), cut to ``limit`` characters with ``…``."""
    flat = " ".join(str(text if text is not None else "").split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def anchor_id(prefix: str, key: Any) -> str:
    """A unique, HTML-safe anchor id for any key: ``prefix-<slug>-<hash>``.

    The slug keeps the key readable in the URL; the hash of the full key keeps two keys with
    the same slug (``a b`` and ``a/b``) apart.

    Args:
        prefix: A safe prefix, usually the section id.
        key: The key (a dialogue id may contain any character).

    Returns:
        An id matching ``[A-Za-z][A-Za-z0-9_-]*``.
    """
    text = str(key)
    slug = re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()[:40]
    digest = hashlib.sha1(text.encode("utf-8")).hexdigest()[:10]
    return f"{prefix}-{slug}-{digest}" if slug else f"{prefix}-{digest}"


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], *, cls: str = "data") -> str:
    """An HTML table; ``headers`` are plain text, ``rows`` are cells of trusted HTML."""
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def figure(svg: str, caption: str) -> str:
    """A chart with its caption (plain text)."""
    return f"<figure>{svg}<figcaption>{escape(caption)}</figcaption></figure>"


def skipped_records_html(summary: Mapping[str, Any]) -> str:
    """A table of the run's skipped records and failed dialogues (empty when there are none)."""
    skipped, failed = summary.get("skipped") or [], summary.get("failed") or []
    rows = [
        [escape(f"{s.get('file')}:{s.get('line')}"), escape(str(s.get("dialogue_id") or "")),
         escape(str(s.get("field") or "")), escape(str(s.get("message") or s.get("error")))]
        for s in skipped
    ] + [
        ["run failed", escape(str(f.get("dialogue_id"))), "", escape(str(f.get("error")))]
        for f in failed
    ]  # fmt: skip
    title = f"Skipped records ({len(skipped)}) and failed dialogues ({len(failed)})"
    headers = ["where", "dialogue", "field", "message"]
    return f"<h3>{title}</h3>{table(headers, rows)}" if rows else ""


def _overview(sections: Sequence[Section]) -> str:
    groups = []
    for section in sections:
        cards = "".join(
            f'<div class="card"><div class="value">{value_html(value)}</div>'
            f'<div class="label">{escape(label)}</div></div>'
            for label, value in section.overview
        )
        groups.append(
            f'<div class="group"><h3><a href="#{section.id}">{escape(section.title)}</a></h3>'
            f'<div class="cards">{cards}</div></div>'
        )
    return '<section id="report-overview"><h2>Overview</h2>' + "".join(groups) + "</section>"


def render_report(
    title: str, sections: Sequence[Section], *, meta: Mapping[str, str] | None = None
) -> str:
    """The whole report as one self-contained HTML document.

    Args:
        title: Page title and top heading.
        sections: The sections, in display order.
        meta: Facts about the run (input file, judges, date, ...), shown as a small table.

    Returns:
        The HTML text.

    Raises:
        ValueError: If a section id is not a safe anchor, is reserved, or is used twice.
    """
    seen: set[str] = set()
    for section in sections:
        if not _SAFE_ID.match(section.id) or section.id in _RESERVED_IDS or section.id in seen:
            raise ValueError(f"section id {section.id!r} is unsafe, reserved or duplicated")
        seen.add(section.id)
    meta_html = ""
    if meta:
        rows = "".join(
            f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in meta.items()
        )
        meta_html = f'<table id="report-meta" class="meta"><tbody>{rows}</tbody></table>'
    toc = "".join(f'<li><a href="#{s.id}">{escape(s.title)}</a></li>' for s in sections)
    body = "".join(
        f'<section id="{s.id}" class="report-section"><h2>{escape(s.title)}</h2>{s.body}</section>'
        for s in sections
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{_CSS}</style></head><body>"
        f"<header><h1>{escape(title)}</h1>{meta_html}</header>"
        f"<main>{_overview(sections)}"
        f'<nav id="report-contents" class="toc"><h2>Contents</h2><ol>{toc}</ol></nav>'
        f"{body}</main></body></html>\n"
    )


def write_report(
    path: Path, title: str, sections: Sequence[Section], *, meta: Mapping[str, str] | None = None
) -> None:
    """Render the report (see :func:`render_report`) and write it to ``path`` as UTF-8.

    Raises:
        ValueError: If a section id is not a safe anchor, is reserved, or is used twice.
    """
    html = render_report(title, sections, meta=meta)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomically(path, html)


_CSS = """
:root{--ok:#2e7d32;--ok-bg:#e6f4ea;--bad:#c62828;--bad-bg:#fdecea;--warn:#a86500;
--warn-bg:#fff4e0;--muted:#666;--line:#dde1e6;--head:#f3f5f8}
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;
color:#1f2328;background:#fff;margin:0 auto;max-width:1180px;padding:24px 28px;line-height:1.45;
font-size:15px}
h1{font-size:1.7em;margin:0 0 .4em}h2{font-size:1.3em;margin:1.6em 0 .6em;padding-bottom:.2em;
border-bottom:2px solid var(--line)}h3{font-size:1.08em;margin:1.3em 0 .5em}
h4{font-size:1em;margin:1em 0 .4em}
a{color:#1a5fb4}a:hover{text-decoration:underline}
table{border-collapse:collapse;margin:.4em 0 1em;font-size:.92em}
th,td{border:1px solid var(--line);padding:5px 8px;text-align:left;vertical-align:top}
thead th{background:var(--head);font-weight:600}
tbody tr:nth-child(even){background:#fafbfc}
table.meta th{background:var(--head);font-weight:600}table.meta{font-size:.88em}
table.data{width:100%}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(150px,1fr));gap:10px}
.card{border:1px solid var(--line);border-radius:8px;padding:10px 12px;background:#fbfcfd}
.card .value{font-size:1.45em;font-weight:600;font-variant-numeric:tabular-nums}
.card .label{color:var(--muted);font-size:.85em}
.na{color:#888;cursor:help}
.toc ol{margin:.2em 0;padding-left:1.4em}
figure{margin:.6em 0 1.2em}figcaption{color:var(--muted);font-size:.88em;margin-top:.2em}
svg.chart{max-width:100%;height:auto;display:block}
.badge{display:inline-block;padding:0 .45em;border-radius:4px;font-size:.85em;font-weight:600;
white-space:nowrap}
.ok{color:var(--ok);background:var(--ok-bg)}.bad{color:var(--bad);background:var(--bad-bg)}
.warn{color:var(--warn);background:var(--warn-bg)}.muted{color:var(--muted)}
.note{color:var(--muted);font-style:italic}
.msg{white-space:pre-wrap;word-break:break-word}
.drill{border:1px solid var(--line);border-radius:8px;padding:4px 14px 10px;margin:14px 0}
.drill:target{border-color:#1a5fb4;box-shadow:0 0 0 2px #c9dcf5}
.drill .goal{border-left:4px solid var(--line);padding-left:10px;margin:10px 0}
.drill .goal.failed{border-left-color:var(--bad)}.drill .goal.succeeded{border-left-color:var(--ok)}
table.turns{width:100%;table-layout:fixed}table.turns th:nth-child(1){width:2.6em}
table.turns th:nth-child(2){width:20%}table.turns th:nth-child(3){width:29%}
table.turns th:nth-child(5){width:11%}table.turns th:nth-child(6){width:8%}
table.turns th:nth-child(7){width:12%}
.sources{margin:0;padding-left:1.1em;font-size:.9em}
details summary{cursor:pointer;color:#1a5fb4}
@media print{body{max-width:none;padding:0;font-size:11pt}a{color:inherit;text-decoration:none}
.toc,.back{display:none}.card,figure,tr,.drill .goal{break-inside:avoid}h2,h3,h4{break-after:avoid}}
"""
