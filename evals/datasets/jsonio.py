"""Streaming readers for JSON Lines and JSON files, plain or gzip-compressed.

Both readers yield one :class:`RawRecord` per dialogue and hold at most one record (plus a read
buffer) in memory, so a file of any size loads in constant memory per record. A JSON file may
hold one object or a list of them; the list is decoded element by element rather than with
``json.load``, which would materialise the whole file first.
"""

from __future__ import annotations

import codecs
import gzip
import io
import json
import re
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from todeval.evals.datasets.errors import DatasetFormatError
from todeval.evals.datasets.jsonsafe import (
    TOO_DEEP,
    NotText,
    TooDeepOrLong,
    loads_json,
    refuse_lone_surrogates,
)

Container = Literal["jsonl", "json"]

_GZIP_MAGIC = b"\x1f\x8b"
_JSONL_SUFFIXES = (".jsonl", ".ndjson")
_CHUNK_BYTES = 1 << 16
_WHITESPACE = re.compile(r"[ \t\n\r]*")
# A string, a run of openers, a run of closers, a comma, or anything else up to the next one.
_SKIP_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[{]+|[\]}]+|,|[^"\[\]{},]+')
_DECODER = json.JSONDecoder()
# Finds the id in a line that is not valid JSON, so its error can still say which dialogue.
_ID_IN_TEXT = re.compile(rb'"dialog(?:ue)?_id"\s*:\s*"((?:[^"\\]|\\.)*)"')


@dataclass(frozen=True)
class RawRecord:
    """One record as read from a file: its position and either the parsed JSON or an error.

    Attributes:
        position: 1-based line (JSONL) or 1-based index in the JSON list.
        value: The parsed JSON value, ``None`` when unparsable; kept beside ``error`` when
            it parsed but is refused (lone surrogates), so a format can still be told from it.
        error: Why the record could not be parsed, or ``None``.
        dialogue_id: For an unparsable line, the id it seems to carry, if one can be seen.
        field: Where in the record the text is unreadable, when that is known.
    """

    position: int
    value: Any = None
    error: str | None = None
    dialogue_id: str | None = None
    field: str | None = None


def container_of(path: Path) -> Container:
    """JSON Lines or JSON, from the file name (a trailing ``.gz`` is ignored).

    Raises:
        DatasetFormatError: The extension is neither ``.json`` nor ``.jsonl``/``.ndjson``.
    """
    name = path.name.lower().removesuffix(".gz")
    if name.endswith(_JSONL_SUFFIXES):
        return "jsonl"
    if name.endswith(".json"):
        return "json"
    raise DatasetFormatError(
        f"{path}: cannot tell how records are stored from the extension; expected .json "
        "(one dialogue or a list), .jsonl (one dialogue per line), optionally with .gz"
    )


@contextmanager
def open_binary(path: Path) -> Iterator[io.BufferedIOBase]:
    """Open a file for reading bytes, decompressing it when it starts with the gzip magic.

    Raises:
        DatasetFormatError: The path is missing, is not a file, or cannot be opened.
    """
    if not path.is_file():
        raise DatasetFormatError(f"{path}: no such file")
    try:
        with path.open("rb") as probe:
            compressed = probe.read(2) == _GZIP_MAGIC
        stream: io.BufferedIOBase = gzip.open(path, "rb") if compressed else path.open("rb")
    except OSError as exc:
        raise DatasetFormatError(f"{path}: cannot open ({exc})") from exc
    with stream:
        yield stream


def count_jsonl_records(path: Path) -> int:
    """How many records a JSON Lines file holds (its non-blank lines), without parsing them.

    Raises:
        DatasetFormatError: The file is missing or cannot be opened.
    """
    with open_binary(path) as stream:
        return sum(1 for line in stream if not line.isspace())


def iter_records(path: Path, container: Container) -> Generator[RawRecord, None, None]:
    """Yield the file's records in order; a broken record never stops the stream.

    A compressed file that turns out truncated or corrupt part-way yields one final error
    after the records that could be read.
    """
    with open_binary(path) as stream:
        records = iter_jsonl(stream) if container == "jsonl" else iter_json(stream)
        position = 0
        try:
            for record in records:
                position = record.position
                yield record
        except (OSError, EOFError, UnicodeDecodeError) as exc:
            yield RawRecord(position + 1, error=f"file is corrupt or truncated here: {exc}")
        except DatasetFormatError as exc:
            raise DatasetFormatError(f"{path}: {exc}") from exc


def iter_jsonl(stream: io.BufferedIOBase) -> Iterator[RawRecord]:
    """One record per non-blank line; invalid JSON on a line is an error for that line only."""
    for line_number, line in enumerate(stream, start=1):
        if not line.strip():
            continue
        try:
            yield RawRecord(line_number, value=loads_json(line))
        except NotText as exc:
            yield RawRecord(
                line_number, error=f"invalid JSON: {exc.msg}", field=exc.field, value=exc.value
            )
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            yield RawRecord(line_number, error=f"invalid JSON: {exc}", dialogue_id=_id_in(line))


def iter_json(stream: io.BufferedIOBase) -> Iterator[RawRecord]:
    """The elements of a top-level JSON list, or a top-level object as record 1.

    A syntax error inside a list cannot be skipped reliably (the next element's start is
    unknown), so it yields one error for that element and stops.

    Raises:
        DatasetFormatError: The file is empty or does not start with ``[`` or ``{``.
    """
    reader = _IncrementalJson(stream)
    first = reader.peek()
    if first == "{":
        yield from _one_object(reader)
    elif first == "[":
        reader.advance()
        yield from _list_elements(reader)
    else:
        found = "an empty file" if first == "" else f"{first!r}"
        raise DatasetFormatError(f"expected a JSON object or list of objects, found {found}")


def _one_object(reader: _IncrementalJson) -> Iterator[RawRecord]:
    try:
        yield RawRecord(1, value=reader.value())
    except NotText as exc:
        yield RawRecord(1, error=f"invalid JSON: {exc.msg}", field=exc.field, value=exc.value)
        return
    except json.JSONDecodeError as exc:
        yield RawRecord(1, error=f"invalid JSON: {exc}")
        return
    if reader.peek() != "":
        # The commonest cause: JSON Lines content saved under a .json name.
        yield RawRecord(
            2,
            error="extra data after the first object; if this is one dialogue "
            "per line, name the file .jsonl",
        )


def _list_elements(reader: _IncrementalJson) -> Iterator[RawRecord]:
    index = 0
    if reader.peek() == "]":
        reader.advance()
        return
    while True:
        index += 1
        try:
            yield RawRecord(index, value=reader.value())
        except NotText as exc:
            yield RawRecord(
                index, error=f"invalid JSON: {exc.msg}", field=exc.field, value=exc.value
            )
        except TooDeepOrLong as exc:
            # Well-formed JSON this parser refuses: its end can still be found, so only this
            # record is lost.
            yield RawRecord(index, error=f"invalid JSON: {exc}")
            if not reader.skip_value():
                return
        except json.JSONDecodeError as exc:
            yield RawRecord(index, error=f"invalid JSON, rest of the file not read: {exc}")
            return
        separator = reader.peek()
        reader.advance()
        if separator == "]":
            return
        if separator != ",":
            yield RawRecord(
                index + 1,
                error=f"expected ',' or ']' after record {index}, "
                f"found {separator or 'end of file'!r}; rest of the file not read",
            )
            return


class _IncrementalJson:
    """Decode consecutive JSON values from a byte stream with a growing text buffer."""

    def __init__(self, stream: io.BufferedIOBase) -> None:
        self._stream = stream
        # utf-8-sig: tolerate the byte-order mark some editors write.
        self._decoder = codecs.getincrementaldecoder("utf-8-sig")()
        self._buffer = ""
        self._pos = 0
        self._eof = False

    def peek(self) -> str:
        """Skip whitespace and return the next character ('' at the end of the file)."""
        while True:
            blank = _WHITESPACE.match(self._buffer, self._pos)
            self._pos = blank.end() if blank else self._pos
            if self._pos < len(self._buffer):
                return self._buffer[self._pos]
            if not self._read_more(_CHUNK_BYTES):
                return ""

    def advance(self) -> None:
        """Step over the character ``peek`` returned."""
        self._pos += 1

    def value(self) -> Any:
        """Decode the JSON value at the cursor, reading more of the file until it is complete.

        Raises:
            json.JSONDecodeError: The value is malformed (or the file ends inside it).
        """
        self.peek()  # raw_decode does not skip leading whitespace
        while True:
            try:
                value, end = _DECODER.raw_decode(self._buffer, self._pos)
            except RecursionError as exc:
                # Too deep whatever follows: reading on would only buffer the rest of the file.
                raise TooDeepOrLong(TOO_DEEP) from exc
            except json.JSONDecodeError:
                # Doubling what is read keeps re-decoding a large record linear overall.
                if not self._read_more(max(_CHUNK_BYTES, len(self._buffer) - self._pos)):
                    raise
                continue
            except ValueError as exc:  # an integer past int_max_str_digits
                raise TooDeepOrLong(str(exc)) from exc
            # A number at the very end of the buffer may continue in the next chunk.
            if end < len(self._buffer) or not self._read_more(_CHUNK_BYTES):
                start, self._pos = self._pos, end
                # Refused only once read whole, so the next value follows as usual.
                refuse_lone_surrogates(value, self._buffer, start, end)
                return value

    def skip_value(self) -> bool:
        """Step over the JSON value at the cursor without decoding it; False at the end of file.

        Strings and runs of brackets are matched as tokens and only the depth is counted (no
        recursion), so a value :meth:`value` refused for its depth or an over-long number can
        still be passed over.
        """
        self.peek()
        depth, offset = 0, 0
        while True:
            text, pos = self._buffer, self._pos + offset
            while (token := _SKIP_TOKEN.match(text, pos)) is not None:
                first, end = token.group()[0], None
                if first == '"' and depth == 0:
                    end = token.end()
                elif first in "[{":
                    depth += len(token.group())
                elif first in "]}":
                    # A bare number ends at the list's own close; a container at its close.
                    closes = len(token.group())
                    end = token.start() + depth if closes >= depth else None
                    depth -= closes
                elif first == "," and depth == 0:
                    end = token.start()
                if end is not None:
                    self._pos = end
                    return True
                pos = token.end()
            # The buffer ends (perhaps inside a string, which then is matched again whole).
            offset = pos - self._pos
            if not self._read_more(_CHUNK_BYTES):
                return False

    def _read_more(self, size: int) -> bool:
        """Append at least one more character to the buffer; False at the end of the file."""
        data = ""
        while not data and not self._eof:
            raw = self._stream.read(size)
            self._eof = not raw
            # A chunk may end inside a multi-byte character: the decoder keeps that part.
            data = self._decoder.decode(raw, final=self._eof)
        if not data:
            return False
        self._buffer = self._buffer[self._pos :] + data
        self._pos = 0
        return True


def _id_in(line: bytes) -> str | None:
    found = _ID_IN_TEXT.search(line)
    return found.group(1).decode("utf-8", errors="replace") if found else None
