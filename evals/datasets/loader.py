"""Load dialogues from any supported file as one stream of dialogues and record errors."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import closing
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Literal, TypeVar

from todeval.evals.datasets.detect import Variant, detect_variant, dialogue_files
from todeval.evals.datasets.errors import DatasetFormatError, error_from_exception
from todeval.evals.datasets.jsonio import Container, container_of, iter_records
from todeval.evals.datasets.mtg import mtg_dialogue
from todeval.evals.datasets.sgd import sgd_compact_dialogue
from todeval.evals.datasets.sgd_original import SGD_SPLITS, sgd_original_dialogue
from todeval.evals.goal_tracking_schema import AtodDialogue
from todeval.evals.schema import Dialogue, RecordError

Format = Literal["auto", "mtg", "sgd"]

D = TypeVar("D", Dialogue, AtodDialogue)
"""The record type a loader yields."""

_FORMATS: tuple[Format, ...] = ("auto", "mtg", "sgd")


@dataclass(frozen=True)
class _FilePlan:
    """How to read one file: where, how records are stored, how each becomes a Dialogue."""

    path: Path
    container: Container
    convert: Callable[[Any], Dialogue]


def load_dialogues(path: str | Path, format: Format = "auto") -> Iterator[Dialogue | RecordError]:
    """Stream the dialogues of a file or folder, one record at a time.

    A malformed record, or a repeated dialogue id, is yielded as a :class:`RecordError`
    naming the file, line or 1-based record index, the dialogue id and the dotted field
    (0-based list indices, as pydantic reports them: ``turns.3.user_msg``).

    Args:
        path: A Mind the Goal or SGD (compact, release file or split folder) file; may be gzipped.
        format: ``"mtg"``, ``"sgd"`` (either SGD form) or ``"auto"`` (:func:`detect_format`).

    Raises:
        ValueError: (a :class:`DatasetFormatError` for files) the path is missing or
            unreadable, its format cannot be recognised, or ``format`` is unknown; raised
            before any record is read.
    """
    if format not in _FORMATS:
        raise ValueError(f"unknown format {format!r}; expected one of {_FORMATS}")
    return _stream(_plan(Path(path), format))


def split_records(
    items: Iterable[Dialogue | RecordError],
) -> tuple[list[Dialogue], list[RecordError]]:
    """Separate a loader's stream into ``(dialogues, errors)``, keeping their order."""
    dialogues: list[Dialogue] = []
    errors: list[RecordError] = []
    for item in items:
        if isinstance(item, RecordError):
            errors.append(item)
        else:
            dialogues.append(item)
    return dialogues, errors


def _plan(source: Path, format: Format) -> list[_FilePlan]:
    if source.is_dir():
        if format == "mtg":
            raise DatasetFormatError(
                f"{source}: a folder is read as the SGD release; pass a Mind the Goal file"
            )
        convert = partial(sgd_original_dialogue, split=_split_of(source))
        return [_FilePlan(file, container_of(file), convert) for file in dialogue_files(source)]
    container = container_of(source)
    # Read the first record now so an unreadable file fails here, not during iteration.
    with closing(iter_records(source, container)) as records:
        next(records, None)
    variant = _variant(source, format, container)
    return [_FilePlan(source, container, _converter(variant, source))]


def _variant(source: Path, format: Format, container: Container) -> Variant:
    if format == "auto":
        return detect_variant(source)
    try:
        sniffed: Variant | None = detect_variant(source)
    except DatasetFormatError:
        sniffed = None
    # A format flag that contradicts the content would turn every record into a field error.
    if format == "mtg":
        if sniffed is not None and sniffed != "mtg":
            raise DatasetFormatError(f"{source}: this looks like SGD data; drop --format mtg")
        return "mtg"
    if sniffed == "mtg":
        raise DatasetFormatError(f"{source}: this looks like Mind the Goal data; drop --format sgd")
    # "sgd": the content tells the two forms apart; failing that, the usual extension does.
    if sniffed is not None:
        return sniffed
    return "sgd_compact" if container == "jsonl" else "sgd_original"


def _converter(variant: Variant, source: Path) -> Callable[[Any], Dialogue]:
    if variant == "mtg":
        return mtg_dialogue
    if variant == "sgd_compact":
        return sgd_compact_dialogue
    return partial(sgd_original_dialogue, split=_split_of(source.parent))


def _split_of(folder: Path) -> str | None:
    """The SGD split a release folder holds, from its name (``train``, ``dev``, ``test``)."""
    return folder.name if folder.name in SGD_SPLITS else None


def _stream(plans: list[_FilePlan]) -> Iterator[Dialogue | RecordError]:
    for plan in plans:
        yield from _load_file(plan)


def _load_file(plan: _FilePlan) -> Iterator[Dialogue | RecordError]:
    return load_records(plan.path, plan.container, plan.convert)


def load_records(
    path: Path, container: Container, convert: Callable[[Any], D]
) -> Iterator[D | RecordError]:
    """Each record of one file converted, or a :class:`RecordError` naming where and why.

    Shared by every loader: a record that cannot be parsed or converted, or that repeats a
    dialogue id already seen in the file, becomes an error and the others still load.
    """
    file = str(path)
    unit = "line" if container == "jsonl" else "record"
    first_seen: dict[str, int] = {}
    for record in iter_records(path, container):
        if record.error is not None:
            yield RecordError(
                file=file,
                line=record.position,
                dialogue_id=record.dialogue_id,
                field=record.field,
                message=record.error,
            )
            continue
        try:
            dialogue = convert(record.value)
        except ValueError as exc:  # pydantic's ValidationError and FieldError included
            yield error_from_exception(exc, file=file, line=record.position, raw=record.value)
            continue
        earlier = first_seen.setdefault(dialogue.dialogue_id, record.position)
        if earlier != record.position:
            yield RecordError(
                file=file,
                line=record.position,
                dialogue_id=dialogue.dialogue_id,
                field="dialogue_id",
                message=f"duplicate dialogue id, already used at {unit} {earlier} of this file",
            )
            continue
        yield dialogue
