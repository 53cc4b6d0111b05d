"""ATOD annotated dialogues (paper 000, Listings 1 and 2) from JSON or JSON Lines files.

The contract is :class:`~evals.goal_tracking_schema.AtodDialogue`; files are streamed as
:mod:`evals.datasets.jsonio` reads them. A bad record becomes a
:class:`~evals.schema.RecordError` naming the dotted field. Beyond the schema, a record is
refused for an unknown goal id in a turn, turn ids not running 1..N, duplicate goal ids or an
unknown dependency. ``all_goals`` is not checked against ``goal_status_changes``: annotated
files may disagree, and the metrics read ``all_goals``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import closing
from itertools import islice
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from todeval.evals.datasets.errors import DatasetFormatError, FieldError
from todeval.evals.datasets.jsonio import container_of, iter_records
from todeval.evals.datasets.loader import load_records
from todeval.evals.goal_tracking_schema import AtodDialogue, AtodGoal, AtodTurn
from todeval.evals.schema import RecordError

#: How many unreadable records :func:`looks_like_atod` skips before it gives up.
_SNIFF_RECORDS = 50

_TURNS = TypeAdapter(list[AtodTurn])
_GOALS = TypeAdapter(list[AtodGoal])


def load_atod(path: str | Path) -> Iterator[AtodDialogue | RecordError]:
    """Stream the ATOD dialogues of a file; a repeated dialogue id is an error for the later record.

    Raises:
        DatasetFormatError: The file is missing, unreadable or has an unknown extension;
            raised here, before any record is read.
    """
    source = Path(path)
    container = container_of(source)
    # Read the first record now so an unreadable file fails here, not during iteration.
    with closing(iter_records(source, container)) as records:
        next(records, None)
    return load_records(source, container, atod_dialogue)


def looks_like_atod(path: str | Path) -> bool:
    """Whether a file holds ATOD dialogues, so that a ``--format auto`` can pick this loader.

    It does when its first JSON object has ``goal_list`` and ``turns`` whose items carry an
    ``utterance``. Ask this before :func:`~evals.datasets.detect_format`, which would take
    such turns for the original SGD release. Unparsable records at the start are skipped; a
    file that cannot be read at all is not ATOD.
    """
    source = Path(path)
    try:
        with closing(iter_records(source, container_of(source))) as records:
            for record in islice(records, _SNIFF_RECORDS):
                if isinstance(record.value, Mapping):
                    return _is_atod_record(record.value)
    except DatasetFormatError:
        return False
    return False


def atod_dialogue(raw: Any) -> AtodDialogue:
    """Validate one ATOD record.

    Raises:
        pydantic.ValidationError: A field has the wrong type or value; located by its path.
        FieldError: Turn ids out of order, a goal id that ``goal_list`` lacks, a duplicate
            goal id or an unknown dependency; the field names the first offending place.
    """
    try:
        dialogue = AtodDialogue.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        if first["loc"] or first["type"] != "value_error" or not isinstance(raw, Mapping):
            raise
        # The schema's cross-field check has no location: find the field it objects to.
        goals = _GOALS.validate_python(raw.get("goal_list", []))
        located = _first_inconsistency(goals, _TURNS.validate_python(raw["turns"]))
        if located is None:
            raise ValueError(str(exc)) from exc
        raise FieldError(*located) from exc
    located = _first_inconsistency(dialogue.goal_list, dialogue.turns)
    if located is not None:
        raise FieldError(*located)
    return dialogue


def _is_atod_record(record: Mapping[str, Any]) -> bool:
    turns = record.get("turns")
    return (
        "goal_list" in record
        and isinstance(turns, list)
        and any(isinstance(turn, Mapping) and "utterance" in turn for turn in turns)
    )


def _first_inconsistency(
    goals: Sequence[AtodGoal], turns: Sequence[AtodTurn]
) -> tuple[str, str] | None:
    """``(field, message)`` of the first goal id, dependency, turn id or goal id used at fault.

    The schema checks the last two itself but cannot say where the fault is.
    """
    known: set[str] = set()
    for index, goal in enumerate(goals):
        if goal.id in known:
            return f"goal_list.{index}.id", f"goal id {goal.id!r} is used twice"
        known.add(goal.id)
    for index, goal in enumerate(goals):
        for j, other in enumerate(goal.dependencies):
            if other not in known:
                return f"goal_list.{index}.dependencies.{j}", f"goal {other!r} is not in goal_list"
    for index, turn in enumerate(turns):
        if turn.turn_id != index + 1:
            return (
                f"turns.{index}.turn_id",
                f"expected {index + 1}, got {turn.turn_id}: turn ids run 1..{len(turns)} in order",
            )
    for index, turn in enumerate(turns):
        for j, change in enumerate(turn.goal_status_changes):
            if known and change.goal_id not in known:
                field = f"turns.{index}.goal_status_changes.{j}.goal_id"
                return field, f"goal {change.goal_id!r} is not in goal_list"
        for goal_id in turn.all_goals:
            if known and goal_id not in known:
                return f"turns.{index}.all_goals.{goal_id}", f"goal {goal_id!r} is not in goal_list"
    return None
