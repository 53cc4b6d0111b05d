"""Errors raised or reported by the dataset loaders.

Two kinds of failure are kept apart on purpose. A file the loaders cannot read at all (missing,
not JSON, unknown format) is a usage error and raises :class:`DatasetFormatError`. A single bad
record inside a readable file is data, not a crash: it becomes a :class:`~evals.schema.RecordError`
in the stream and loading continues with the next record.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from todeval.evals.schema import RecordError

#: The field named when the problem is the record as a whole (e.g. it is not a JSON object).
WHOLE_RECORD = "<record>"

#: How many further problems of one record are named in its error message.
_MORE_PROBLEMS_SHOWN = 3


class DatasetFormatError(ValueError):
    """A whole file or folder cannot be read as dialogues (missing, not JSON, unknown format)."""


class FieldError(ValueError):
    """A record is malformed at one field (dotted path) that pydantic does not locate by itself."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def duplicate_id(
    file: str, line: int | None, dialogue_id: str, where: str, field: str = "id"
) -> RecordError:
    """The error of a record whose id an earlier record already has (``where``: that one)."""
    return RecordError(
        file=file,
        line=line,
        dialogue_id=dialogue_id,
        field=field,
        message=f"duplicate id, already used {where}",
    )


def dotted(loc: Sequence[int | str]) -> str:
    """Join a pydantic error location into a dotted path (``("turns", 3, "user_msg")``)."""
    return ".".join(str(part) for part in loc)


def text_id(value: Any) -> str | None:
    """An id given as text or a whole number, else None (``true`` is no id, nor is blank text)."""
    # bool is an int subclass, but ``true`` is never a usable id.
    if isinstance(value, str | int) and not isinstance(value, bool) and str(value).strip():
        return str(value)
    return None


def raw_dialogue_id(raw: Any) -> str | None:
    """The record's id if it can be read (``dialogue_id`` or paper 004's ``dialog_id``)."""
    if not isinstance(raw, Mapping):
        return None
    return next(
        (found for key in ("dialogue_id", "dialog_id") if (found := text_id(raw.get(key)))), None
    )


def first_misnumbered_turn(raw: Any) -> str | None:
    """Dotted path of the first turn whose ``turn_number`` is not its 1-based position.

    The schema's turn-order check is a model validator, so pydantic reports it with an empty
    location; this points the user at the turn to fix instead.
    """
    turns = raw.get("turns") if isinstance(raw, Mapping) else None
    if not isinstance(turns, list):
        return None
    for index, turn in enumerate(turns):
        if isinstance(turn, Mapping) and turn.get("turn_number") != index + 1:
            return f"turns.{index}.turn_number"
    return None


def error_from_exception(exc: ValueError, *, file: str, line: int | None, raw: Any) -> RecordError:
    """Describe why one record failed, naming the first offending field and summarising others."""
    dialogue_id = raw_dialogue_id(raw)
    if isinstance(exc, FieldError):
        return RecordError(
            file=file, line=line, dialogue_id=dialogue_id, field=exc.field, message=exc.message
        )
    if not isinstance(exc, ValidationError):
        return RecordError(
            file=file, line=line, dialogue_id=dialogue_id, field=WHOLE_RECORD, message=str(exc)
        )
    problems = exc.errors(include_url=False)
    first, others = problems[0], problems[1:]
    # No location: the record as a whole (not an object) or a check across its turns.
    field = dotted(first["loc"]) or first_misnumbered_turn(raw) or WHOLE_RECORD
    message = str(first["msg"])
    if others:
        shown = "; ".join(
            f"{dotted(p['loc']) or WHOLE_RECORD}: {p['msg']}" for p in others[:_MORE_PROBLEMS_SHOWN]
        )
        extra = len(others) - _MORE_PROBLEMS_SHOWN
        message += f" (also {shown}{f'; and {extra} more' if extra > 0 else ''})"
    return RecordError(file=file, line=line, dialogue_id=dialogue_id, field=field, message=message)
