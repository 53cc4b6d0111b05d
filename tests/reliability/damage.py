"""Malformed records: one kind of damage applied to a well-formed record, and files of them.

A batch is a list of :class:`Case` s, each a record with its id, either left well-formed or
damaged once (a field deleted, replaced by garbage or emptied, the line cut short, invalid
UTF-8, deep nesting, a number too long to parse, a duplicated id, ...). Hypothesis draws the
kind; *where* and *with what* come from the record's seeded random, so hypothesis spends two
choices per record and a batch of over a hundred records stays a cheap example.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from tests.reliability.records import RANDOM, TEXT, TEXT_POOL, Builder, Strategy, Texts

Path_ = tuple[str | int, ...]

GARBAGE: list[Any] = [
    None,
    True,
    0,
    -1,
    1.5,
    10**30,
    "",
    " ",
    "x",
    "\x00\x1b[31m\u202e",
    [],
    {},
    [None],
    [[]],
    {"": {"": [{}]}},
    ["x", 1, None, {"a": []}],
]
NOT_OBJECTS = [value for value in GARBAGE if not isinstance(value, dict)]
HUGE_TEXT = "é🙂\x00" * 40_000  # 120,000 characters: 280 kB of UTF-8, 840 kB as escaped JSON
DEEP = 5_000  # nesting levels: past what Python's json module can parse
LONG_DIGITS = "7" * 5_000  # past int_max_str_digits (4,300): json.loads refuses the number
#: Fewest and most records in a batch (a file): few enough that a failing batch prints, many
#: enough that a few dozen examples reach the suite's 10,000 records per loader.
BATCH_SIZES = (125, 135)
_SENTINEL = "@@todeval-raw@@"  # ASCII (json.dumps may escape the rest); swapped for raw text

# Kinds that act on the JSON value (any container) and on the line's text (JSON Lines only).
VALUE_DAMAGE = (
    "delete",
    "replace",
    "empty_list",
    "not_an_object",
    "deep_nesting",
    "deep_json_text",
    "long_number",
    "nan",
    "huge_text",
    "lone_surrogate",
    "extra_key",
    "duplicate_id",
)
TEXT_DAMAGE = ("truncate", "invalid_utf8")
# These always make the record unreadable (duplicate_id only when the first copy loaded).
ALWAYS_FATAL = frozenset({"not_an_object", "deep_nesting", "long_number", *TEXT_DAMAGE})


@dataclass
class Case:
    """One record of a batch: its id, its JSON value, and the damage done to it, if any."""

    record_id: str
    value: Any
    damage: str | None = None
    where: Path_ = ()
    cut: int = 0  # truncate: keep this fraction (per mille) of the line
    duplicate_of: int | None = None  # duplicate_id: index of the case whose id it took
    ascii_only: bool = True
    expect_issue: str | None = None  # a problem put in a readable record: the issue's field

    def __repr__(self) -> str:
        # Failing examples print whole batches: the damage and a glimpse of the value suffice.
        shown = json.dumps(self.value, ensure_ascii=True)
        shown = shown if len(shown) <= 300 else f"{shown[:300]}... ({len(shown)} chars)"
        return f"Case({self.record_id!r}, {self.damage}, at {self.where}, cut {self.cut}: {shown})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))  # hypothesis's printer, for falsifying examples

    @property
    def well_formed(self) -> bool:
        """Left as generated (a duplicated id is damage of the batch, not of the record)."""
        return self.damage is None

    @property
    def must_fail(self) -> bool:
        """Damage no loader may accept."""
        return self.damage in ALWAYS_FATAL

    def text(self) -> bytes:
        """The record as one JSON text (one line), with any text-level damage applied."""
        raw = json.dumps(self.value, ensure_ascii=self.ascii_only)
        raw = raw.replace(f'"{_SENTINEL}deep"', "[" * DEEP + "]" * DEEP)
        raw = raw.replace(f'"{_SENTINEL}number"', LONG_DIGITS)
        if self.damage == "truncate":
            raw = raw[: max(1, min(len(raw) - 1, len(raw) * self.cut // 1000))]
        data = raw.encode("utf-8")
        if self.damage == "invalid_utf8":
            middle = len(data) // 2
            data = data[:middle] + b"\xff\xc3(" + data[middle:]
        return data


def paths(value: Any, prefix: Path_ = ()) -> list[Path_]:
    """Every path below ``value`` (dict keys and list indices), parents before children."""
    found: list[Path_] = []
    items: list[tuple[str | int, Any]] = []
    if isinstance(value, dict):
        items = list(value.items())
    elif isinstance(value, list):
        items = list(enumerate(value))
    for key, child in items:
        found.append((*prefix, key))
        found.extend(paths(child, (*prefix, key)))
    return found


def get(value: Any, where: Path_) -> Any:
    """The value at ``where``."""
    for key in where:
        value = value[key]
    return value


def _put(value: Any, where: Path_, new: Any) -> None:
    get(value, where[:-1])[where[-1]] = new


def damaged(case: Case, kind: str, pick: int, garbage: int, *, text_damage: bool) -> Case:
    """``case`` with one damage of ``kind``; ``pick`` chooses where and ``garbage`` with what.

    A kind with nowhere to act (no string to damage, no list to empty) falls back to
    replacing a field, so every damaged case is damaged.
    """
    if kind in TEXT_DAMAGE and not text_damage:
        kind = "replace"
    value = copy.deepcopy(case.value)
    every = paths(value)
    strings = [p for p in every if isinstance(get(value, p), str)]
    lists = [p for p in every if isinstance(get(value, p), list)]
    keyed = [p for p in every if isinstance(get(value, p[:-1]), dict)]
    choices = {
        "delete": keyed,
        "empty_list": lists,
        "huge_text": strings,
        "lone_surrogate": strings,
        "deep_json_text": strings,
    }
    candidates = choices.get(kind, every)
    if kind in choices and not candidates:
        kind, candidates = "replace", every
    where = candidates[pick % len(candidates)] if candidates else ()
    if kind == "delete":
        del get(value, where[:-1])[where[-1]]
    elif kind == "replace" and where:
        _put(value, where, copy.deepcopy(GARBAGE[garbage % len(GARBAGE)]))
    elif kind == "empty_list":
        _put(value, where, [])
    elif kind == "not_an_object":
        value, where = copy.deepcopy(NOT_OBJECTS[garbage % len(NOT_OBJECTS)]), ()
    elif kind in ("deep_nesting", "long_number"):
        marker = f"{_SENTINEL}{'deep' if kind == 'deep_nesting' else 'number'}"
        if where:
            _put(value, where, marker)
        else:
            value[f"x{pick}"] = marker
    elif kind == "nan" and where:
        _put(value, where, [float("nan"), float("inf"), -float("inf")][garbage % 3])
    elif kind == "huge_text":
        _put(value, where, HUGE_TEXT)
    elif kind == "lone_surrogate":
        _put(value, where, "\ud800" + get(value, where))
    elif kind == "deep_json_text":
        # A string holding JSON text that some loaders decode (tool arguments, tau2 messages).
        _put(value, where, '{"message": ' + "[" * DEEP)
    elif kind == "extra_key":
        dicts = [p for p in [(), *every] if isinstance(get(value, p), dict)]
        where = (*dicts[pick % len(dicts)], f"unexpected_{garbage}")
        _put(value, where, GARBAGE[garbage % len(GARBAGE)])
    # A lone surrogate only exists as a JSON escape: it cannot be encoded as UTF-8 text.
    ascii_only = case.ascii_only or kind == "lone_surrogate"
    return Case(case.record_id, value, kind, where, cut=pick % 1000, ascii_only=ascii_only)


def batch(
    build: Builder,
    set_id: Callable[[dict[str, Any], str, int], None],
    *,
    text_damage: bool,
    min_size: int = BATCH_SIZES[0],
    max_size: int = BATCH_SIZES[1],
    kinds: tuple[str, ...] = VALUE_DAMAGE + TEXT_DAMAGE,
    problems: Mapping[str, Callable[[Case, int], Case]] | None = None,
) -> Strategy:
    """A list of cases: well-formed records (about 40 %) and records damaged once.

    Args:
        build: Lays out a well-formed record (without its id) from a seeded random and texts.
        set_id: Puts ``(record, id, index)``'s id into a record.
        text_damage: Whether the container allows damage to one record's text (JSON Lines:
            a broken line stays one broken record; in a JSON document it breaks the file).
        min_size: Fewest records in a batch.
        max_size: Most records in a batch.
        kinds: The damage kinds to draw from.
        problems: Problems a record may have and still load (an unknown tool in a transcript):
            name -> function of the case and a pick, returning it with ``expect_issue`` set.
    """
    extra = dict(problems or {})
    damage = st.sampled_from((None, None, None, None, None, None, *kinds, *extra))

    @st.composite
    def cases(draw: st.DrawFn) -> list[Case]:
        pool, infix = draw(TEXT_POOL), draw(TEXT)
        out: list[Case] = []
        for index in range(draw(st.integers(min_size, max_size))):
            rng = draw(RANDOM)
            value = build(rng, Texts(pool, rng))
            record_id = f"r{infix}·{index}"
            set_id(value, record_id, index)
            case = Case(record_id, value, ascii_only=rng.random() < 0.5)
            # The first record stays well-formed: `todeval evaluate` tells a file's kind from it.
            kind = draw(damage) if out else None
            # Where and with what: from the record's own random, two hypothesis draws fewer.
            pick, garbage = rng.randrange(2**16), rng.randrange(2**8)
            if kind == "duplicate_id":
                earlier = pick % len(out)
                set_id(value, out[earlier].record_id, index)
                case = Case(out[earlier].record_id, value, kind, duplicate_of=earlier)
            elif kind in extra:
                case = extra[kind](case, pick)
            elif kind is not None:
                case = damaged(case, kind, pick, garbage, text_damage=text_damage)
            out.append(case)
        return out

    return cases()


def write_jsonl(path: Path, cases: list[Case]) -> Path:
    """One record per line."""
    path.write_bytes(b"".join(case.text() + b"\n" for case in cases))
    return path


def write_json_list(
    path: Path, cases: list[Case], *, key: str | None = None, around: dict[str, Any] | None = None
) -> Path:
    """A JSON list of the records, or an object holding it under ``key`` beside ``around``."""
    body = b"[" + b",\n".join(case.text() for case in cases) + b"]"
    if key is not None:
        rest = json.dumps(around or {})[1:-1].encode()
        body = b'{"' + key.encode() + b'": ' + body + (b", " + rest if rest else b"") + b"}"
    path.write_bytes(body)
    return path
