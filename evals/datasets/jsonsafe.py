"""Decoding untrusted JSON: every way a record's text can fail is one ``JSONDecodeError``.

Python's parser raises other errors for two kinds of hostile input, nesting deeper than the
interpreter's recursion limit (``RecursionError``) and an integer of more than 4,300 digits (a
plain ``ValueError``), and it accepts a third: lone surrogate escapes (a U+D800 escape alone),
which decode to strings that cannot be written back as UTF-8, so they would stop a run when its
results are written. Here all three are malformed records, reported where they are read.
"""

from __future__ import annotations

import json
import re
from typing import Any

TOO_DEEP = "nested too deeply to read"

# A \uD800-\uDFFF escape: half of a surrogate pair, or (alone) no character at all. The text is
# only walked for a lone one when the raw text has such an escape (rare outside emoji).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE_ESCAPE_BYTES = re.compile(rb"\\u[dD][89a-fA-F]")


class TooDeepOrLong(json.JSONDecodeError):
    """Well-formed JSON Python's parser refuses: nested too deeply, or an over-long integer."""

    def __init__(self, message: str) -> None:
        super().__init__(message, "", 0)


class NotText(json.JSONDecodeError):
    """JSON holding a string that is not Unicode text (a lone surrogate escape).

    Attributes:
        field: Dotted path of the string (or key) in the value.
        value: The parsed value, for telling a file's format (never to load).
    """

    def __init__(self, field: str, value: Any) -> None:
        message = f"{field or 'the value'} is not Unicode text (a lone surrogate escape)"
        super().__init__(message, "", 0)
        self.field = field
        self.value = value


def loads_json(text: str | bytes, *, check_text: bool = True) -> Any:
    """``json.loads`` for untrusted input.

    ``check_text=False`` leaves lone surrogates to the caller (:func:`lone_surrogate`).

    Raises:
        json.JSONDecodeError: The text is not one JSON value this parser can read (a
            :class:`TooDeepOrLong` or :class:`NotText` for the hostile kinds).
    """
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise
    except RecursionError as exc:
        raise TooDeepOrLong(TOO_DEEP) from exc
    except ValueError as exc:  # int_max_str_digits
        raise TooDeepOrLong(str(exc)) from exc
    if check_text:
        refuse_lone_surrogates(value, text)
    return value


def refuse_lone_surrogates(
    value: Any, text: str | bytes, start: int = 0, end: int | None = None
) -> None:
    """Raise :class:`NotText` if ``value``, decoded from ``text[start:end]``, is not all text.

    Raises:
        NotText: A string or key of ``value`` holds a lone surrogate.
    """
    where = lone_surrogate(value) if has_surrogate_escape(text, start, end) else None
    if where is not None:
        raise NotText(where, value)


def has_surrogate_escape(text: str | bytes, start: int = 0, end: int | None = None) -> bool:
    """Whether ``text[start:end]`` has a surrogate escape: only then can its value hold a lone one.

    A cheap scan of the raw text that spares walking the values of the (usual) clean file.
    """
    stop = len(text) if end is None else end
    if isinstance(text, bytes):
        return _SURROGATE_ESCAPE_BYTES.search(text, start, stop) is not None
    return _SURROGATE_ESCAPE.search(text, start, stop) is not None


def lone_surrogate(value: Any) -> str | None:
    """Dotted path of the first string or key in ``value`` that is not Unicode text, or None.

    Iterative: a parsed value may be nested as deeply as the parser allows.
    """
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, str):
            if not item.isascii() and not _encodes(item):
                return path
        elif isinstance(item, dict):
            for key, child in reversed(item.items()):
                name = key.encode("utf-8", "backslashreplace").decode("utf-8")  # a writable path
                where = f"{path}.{name}" if path else name
                if not key.isascii() and not _encodes(key):
                    return where
                stack.append((where, child))
        elif isinstance(item, list):
            stack.extend(
                (f"{path}.{i}" if path else str(i), c) for i, c in reversed(list(enumerate(item)))
            )
    return None


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
