"""The property every loader must have, checked over one batch of cases.

For a loader that yields one item per record in file order: nothing escapes it; every
well-formed record loads under its own id; a record damaged in a way no loader may accept is
a :class:`~evals.schema.RecordError`; a record repeating an id that already loaded is an error
on the id; and every error names the file, the record (line or id) and the field it objects
to, a path into the source record that leads to the damage (or, for a line that is not JSON
at all, says so: such a line has no fields).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, settings

from tests.reliability.damage import BATCH_SIZES, Case, Path_
from todeval.evals.schema import RecordError

#: Where a record's id lives, in any format (``dialog_id`` is read as ``dialogue_id``).
ID_FIELDS = frozenset({"dialogue_id", "dialog_id", "id", "session_id", "eval_id", "individual_id"})
#: Errors for text that is not one JSON value: there is no field to name.
_UNPARSED = ("invalid JSON", "corrupt or truncated")
#: Field names a loader may use for a key it reads under another spelling.
_ALIASES = {"dialog_id": "dialogue_id"}

#: Every loader's tally in this run (see :class:`Tally`).
TALLIES: dict[str, Tally] = {}

#: At least this many records per loader, over all its examples.
RECORDS_PER_LOADER = 10_000
#: Examples (batches) per loader: even batches of the fewest records reach the 10,000.
EXAMPLES = -(-RECORDS_PER_LOADER // BATCH_SIZES[0])


def reliability(max_examples: int = EXAMPLES) -> settings:
    """Derandomized (the same examples in CI every time), no example database, no deadline.

    Each example is a batch of over a hundred records (a file), so few examples reach 10,000
    records; a batch is large by hypothesis's measure, hence the suppressed size health checks.
    """
    return settings(
        max_examples=max_examples,
        derandomize=True,
        database=None,
        deadline=None,
        print_blob=False,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.large_base_example,
            HealthCheck.function_scoped_fixture,
        ],
    )


@dataclass
class Tally:
    """How many records (and batches) a property saw; the suite asserts its 10,000.

    Every tally is kept in :data:`TALLIES` under its loader's name; the suite's conftest
    prints them at the end of the run.
    """

    loader: str
    records: int = 0
    batches: int = 0
    damaged: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        TALLIES[self.loader] = self

    def add(self, cases: Sequence[Case]) -> None:
        self.batches += 1
        self.records += len(cases)
        for case in cases:
            kind = case.damage or ("problem" if case.expect_issue else "well-formed")
            self.damaged[kind] = self.damaged.get(kind, 0) + 1


def describes(error: RecordError, file: str) -> None:
    """The error names the file, the record (line or id) and the field, in its one line."""
    assert error.file == file, error
    assert error.line is not None or error.dialogue_id, f"names no record: {error}"
    text = str(error)
    if error.field is None:
        assert any(words in error.message for words in _UNPARSED), f"names no field: {error}"
    else:
        assert error.field and repr(error.field) in text, error
    assert error.line is None or f":{error.line}" in text


def leads_to(
    error_field: str | None,
    where: Path_,
    prefix: str = "",
    refers: Mapping[str, Collection[str]] | None = None,
) -> bool:
    """Whether the error's field and the damaged path share their first key.

    Args:
        error_field: The field the error names.
        where: The damaged path.
        prefix: The path of the record inside the file (``sessions.3``), when the loader names
            fields from the file's root.
        refers: Damaged key -> keys whose references to it may be what the loader objects to
            (damage to ATOD's ``goal_list`` shows as a turn naming an unknown goal).
    """
    if error_field is None:
        return True  # an unparsed line (checked by :func:`describes`)
    if prefix:
        if not error_field.startswith(prefix):
            return False
        error_field = error_field[len(prefix) :].lstrip(".")
    head = error_field.split(".")[0]
    if not where or head == "<record>":
        return True  # the record as a whole (not an object, an unknown key)
    damaged = _ALIASES.get(str(where[0]), str(where[0]))
    if head in ID_FIELDS and damaged in ID_FIELDS | {"task_id"}:
        return True  # the id is read from the first of several keys present
    return _ALIASES.get(head, head) == damaged or head in (refers or {}).get(damaged, ())


def check_in_order(
    cases: Sequence[Case],
    items: Iterable[Any],
    *,
    file: str,
    loaded_id: Callable[[Any], str],
    field_prefix: Callable[[int], str] = lambda index: "",
    refers: Mapping[str, Collection[str]] | None = None,
    on_loaded: Callable[[Case, Any], None] | None = None,
) -> None:
    """The property for a loader yielding one item per record, in file order.

    Args:
        cases: The batch as written.
        items: What the loader yielded (consumed here, so a late exception fails the test).
        file: The path the errors must name.
        loaded_id: The id of a loaded item.
        field_prefix: The path of record ``index`` in the file, for loaders whose fields start
            at the file's root (a session list's ``sessions.3``); "" when fields are the
            record's own.
        refers: See :func:`leads_to`.
        on_loaded: A further check of each loaded item against its case.
    """
    output = list(items)
    assert len(output) == len(cases), f"{len(cases)} records, {len(output)} items"
    loaded: set[str] = set()
    for index, (case, item) in enumerate(zip(cases, output, strict=True)):
        position = index + 1
        reads_as_first = case.damage in (None, "duplicate_id") and case.record_id not in loaded
        if isinstance(item, RecordError):
            describes(item, file)
            assert item.line in (position, None), (position, item)
            assert not reads_as_first, f"well-formed record {case.record_id!r} refused: {item}"
            if case.damage == "duplicate_id":
                assert item.field is not None and item.field.split(".")[-1] in ID_FIELDS, item
            elif case.damage is not None:
                assert leads_to(item.field, case.where, field_prefix(index), refers), (
                    case.where,
                    item,
                )
            if item.line is None and item.dialogue_id is not None:
                # Read, then refused on a later check (views, derived gold): its id is taken.
                loaded.add(item.dialogue_id)
            continue
        assert not case.must_fail, f"{case.damage} record loaded: {case.where}"
        assert case.damage not in (None, "duplicate_id") or reads_as_first, (
            f"id {case.record_id!r} loaded twice"
        )
        name = loaded_id(item)
        if case.damage is None:
            assert name == case.record_id
        if on_loaded is not None:
            on_loaded(case, item)
        loaded.add(name)
