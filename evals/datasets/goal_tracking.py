"""Goal-tracking records from any dialogue input, with gold where the format has it (ATOD).

ATOD-annotated files carry their gold; SGD gold is derived from the dialogue acts
(:mod:`evals.datasets.sgd_goals`); Mind the Goal dialogues are tracked without gold (dGCR, NTC
and costs only).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from evals.datasets.atod import load_atod, looks_like_atod
from evals.datasets.detect import detect_format
from evals.datasets.loader import Format, load_dialogues
from evals.datasets.sgd_goals import sgd_gold_or_error
from evals.datasets.sgd_schema import load_sgd_schema
from evals.goal_tracking_schema import AtodDialogue
from evals.record_views import atod_view
from evals.schema import RecordError


def load_goal_tracking_records(
    source: Path, fmt: str, schema_path: str | None
) -> Iterator[AtodDialogue | RecordError]:
    """Every record as an :class:`AtodDialogue` (gold when the format has it) or an error.

    Args:
        source: The input file or folder.
        fmt: ``auto``, ``atod``, ``sgd`` or ``mtg``.
        schema_path: An SGD ``schema.json`` for SGD gold (goal names), or None.

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
        return (
            r if isinstance(r, RecordError) else sgd_gold_or_error(r, schema, file=str(source))
            for r in records
        )
    return (r if isinstance(r, RecordError) else atod_view(r) for r in records)
