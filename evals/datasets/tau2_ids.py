"""Ids and trial numbers of transcripts (tau2 simulations, JSON Lines lines), read strictly.

An id is text or a whole number; anything else in its place (``true``, a list, an object) is
the record's error rather than an id made up from its ``str()``. Within one file an id names
one conversation: a later record repeating it is refused (:class:`SeenIds`), as the dialogue
loaders refuse a repeated ``dialogue_id``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from todeval.evals.datasets.errors import FieldError, duplicate_id, text_id
from todeval.evals.goal_shift_schema import Conversation
from todeval.evals.schema import RecordError

#: Where a transcript's id is read from, in order.
ID_KEYS = ("id", "dialogue_id", "task_id")


def id_key(raw: Any) -> str | None:
    """The key a transcript's id is read from: the first of :data:`ID_KEYS` that is set."""
    if not isinstance(raw, Mapping):
        return None
    return next((key for key in ID_KEYS if raw.get(key) is not None), None)


def id_of(raw: Mapping[str, Any]) -> str | None:
    """The transcript's id, if it has a usable one (to name it in an error)."""
    key = id_key(raw)
    return None if key is None else text_id(raw[key])


def required_id(raw: Mapping[str, Any], key: str) -> str:
    """``raw[key]`` as an id.

    Raises:
        FieldError: It is missing, empty or not text or a whole number.
    """
    value = text_id(raw.get(key))
    if value is None:
        problem = "missing" if raw.get(key) is None else "not a text or whole-number id"
        raise FieldError(key, problem)
    return value


def trial_number(raw: Mapping[str, Any]) -> int:
    """The record's ``trial`` (0 when absent).

    Raises:
        FieldError: It is not a whole number.
    """
    value = raw.get("trial")
    if value is None:
        return 0
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if not isinstance(value, int) or isinstance(value, bool):
        raise FieldError("trial", "expected a whole number")
    return value


@dataclass
class SeenIds:
    """Refuses a conversation whose id an earlier one of the same file already has.

    Two records under one id would be scored as one thread. ``unit`` is what a position
    counts (``line``, ``simulation``), for the messages.
    """

    file: str
    unit: str
    first: dict[str, int] = field(default_factory=dict)

    def check(
        self, record: Conversation | RecordError, position: int, key: str | None
    ) -> Conversation | RecordError:
        """``record``, or an error on ``key`` when its id was taken at an earlier position."""
        if isinstance(record, RecordError):
            return record
        earlier = self.first.setdefault(record.dialogue_id, position)
        if earlier == position:
            return record
        where = f"at {self.unit} {earlier} of this file"
        return duplicate_id(self.file, position, record.dialogue_id, where, key or "id")
