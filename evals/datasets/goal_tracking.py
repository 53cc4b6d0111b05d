"""Goal-tracking records from any dialogue input, with gold where the format has it (ATOD).

ATOD-annotated files carry their gold; SGD gold is derived from the dialogue acts
(:mod:`evals.datasets.sgd_goals`); Mind the Goal dialogues are tracked without gold (dGCR, NTC
and costs only).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

from todeval.evals.datasets.atod import load_atod, looks_like_atod
from todeval.evals.datasets.detect import detect_format, detect_variant
from todeval.evals.datasets.errors import DatasetFormatError
from todeval.evals.datasets.jsonio import container_of
from todeval.evals.datasets.loader import Format, load_dialogues
from todeval.evals.datasets.sgd import sgd_source_field
from todeval.evals.datasets.sgd_goals import service_calls, sgd_gold_or_error
from todeval.evals.datasets.sgd_schema import ServiceSchema, load_sgd_schema
from todeval.evals.goal_tracking_schema import AtodDialogue
from todeval.evals.record_views import atod_view
from todeval.evals.schema import Dialogue, RecordError


def load_goal_tracking_records(
    source: Path, fmt: str, schema_path: str | None
) -> Iterator[AtodDialogue | RecordError]:
    """Every record as an :class:`AtodDialogue` (gold when the format has it) or an error.

    Raises:
        ValueError: (a ``DatasetFormatError``) the input or the schema cannot be read, or the
            format is not recognised; raised here, before any record is read.
    """
    if fmt == "atod" or (fmt == "auto" and looks_like_atod(source)):
        return load_atod(source)
    chosen: Format = detect_format(source) if fmt == "auto" else ("sgd" if fmt == "sgd" else "mtg")
    schema = load_sgd_schema(schema_path) if schema_path else None
    records = load_dialogues(source, chosen)
    if chosen == "sgd":
        release = is_sgd_release(source)
        return (
            r
            if isinstance(r, RecordError)
            else sgd_gold(r, schema, file=str(source), release=release)
            for r in records
        )
    return (r if isinstance(r, RecordError) else tracked_view(r, file=str(source)) for r in records)


def is_sgd_release(source: Path) -> bool:
    """Whether SGD input is the release's form (a folder, or its ``dialogues_NNN.json``)."""
    try:
        return detect_variant(source) == "sgd_original"
    except DatasetFormatError:  # nothing recognisable: the loader went by the extension
        return source.is_dir() or container_of(source) == "json"


def sgd_gold(
    dialogue: Dialogue,
    schema: Mapping[str, ServiceSchema] | None,
    *,
    file: str,
    release: bool,
) -> AtodDialogue | RecordError:
    """ATOD gold from the SGD acts, or an error naming the field in the user's own record.

    Each system turn also carries the service calls its frames made, as
    :func:`with_service_calls` would add them, but read while the turns are built (a copy of
    every turn afterwards was a tenth of the loading time).
    """
    gold = sgd_gold_or_error(dialogue, schema, file=file, with_calls=True)
    if isinstance(gold, RecordError) and gold.field is not None:
        return gold.model_copy(update={"field": sgd_source_field(gold.field, release=release)})
    return gold


def with_service_calls(gold: AtodDialogue, dialogue: Dialogue) -> AtodDialogue:
    """``gold`` with each system turn's SGD service calls as the goal tracker's ``actions``.

    The calls are read by :func:`~evals.datasets.sgd_goals.service_calls`. A dialogue whose
    system turns do not line up with its utterances is returned as it is.
    """
    system = [turn for turn in gold.turns if turn.speaker == "SYSTEM"]
    replies = dialogue.turns[: len(system)]
    if len(replies) != len(system) or any(
        turn.utterance != reply.response for turn, reply in zip(system, replies, strict=True)
    ):
        return gold
    calls = {
        turn.turn_id: service_calls(reply.metadata.get("sgd_system_frames"))
        for turn, reply in zip(system, replies, strict=True)
    }
    turns = [
        turn.model_copy(update={"actions": calls[turn.turn_id]}) if turn.turn_id in calls else turn
        for turn in gold.turns
    ]
    return gold.model_copy(update={"turns": turns})


def tracked_view(dialogue: Dialogue, *, file: str) -> AtodDialogue | RecordError:
    """The dialogue's utterances for the goal tracker, or an error when none has any text."""
    try:
        return atod_view(dialogue)
    except ValueError:
        return RecordError(
            file=file,
            dialogue_id=dialogue.dialogue_id,
            field="turns",
            message="every user message and response is empty: nothing to track",
        )
