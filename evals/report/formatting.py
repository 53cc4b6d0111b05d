"""How the report writes numbers and text: percentages, decimals, one-line cuts, safe anchor ids.

Plain text in, plain text out: the templates escape whatever these return. A figure that could
not be computed is written as :data:`MISSING` (never as 0), and the templates mark it.
"""

from __future__ import annotations

import hashlib
import math
import re
from typing import Any

MISSING = "—"
"""How a figure that could not be computed is shown (never as 0)."""


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


def shorten(text: Any, limit: int) -> str:
    """``text`` on one line (``None`` as empty), cut to ``limit`` characters with ``…``."""
    flat = " ".join(str(text if text is not None else "").split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def anchor_id(prefix: str, key: Any) -> str:
    """A unique, HTML-safe anchor id ``prefix-<slug>-<hash>``; the hash keeps like slugs apart."""
    text = str(key)
    slug = re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()[:40]
    digest = hashlib.sha1(text.encode("utf-8")).hexdigest()[:10]
    return f"{prefix}-{slug}-{digest}" if slug else f"{prefix}-{digest}"
