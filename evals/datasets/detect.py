"""Tell which dialogue format a file or folder holds.

The extension says how records are stored (``.json`` list or object, ``.jsonl`` lines, either
optionally gzipped); the keys of the first dialogue's first turn say which format they are in:
``s``/``t`` is compact SGD, ``speaker``/``utterance`` the original SGD release, ``user_msg``
(or ``turn_number``) Mind the Goal. A folder is read as the original SGD release (one
``dialogues_NNN.json`` per file beside a ``schema.json``).
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import closing
from itertools import islice
from pathlib import Path
from typing import Any, Literal

from todeval.evals.datasets.errors import DatasetFormatError
from todeval.evals.datasets.jsonio import container_of, iter_records

#: The formats a loader can read; the public API folds the two SGD forms into "sgd".
Variant = Literal["mtg", "sgd_compact", "sgd_original"]

#: How many records to look at before giving up on recognising a file (skips broken ones).
_SNIFF_RECORDS = 50

#: The SGD release's service catalogue, which sits beside the dialogue files.
SGD_SCHEMA_FILE = "schema.json"


def detect_format(path: str | Path) -> Literal["mtg", "sgd"]:
    """Tell whether a file or folder holds Mind the Goal (``"mtg"``) or SGD (``"sgd"``) dialogues.

    Raises:
        ValueError: (a :class:`DatasetFormatError`) the path is missing, unreadable, or holds
            no record in a known format; the message says what was found.
    """
    return "mtg" if detect_variant(Path(path)) == "mtg" else "sgd"


def detect_variant(path: Path) -> Variant:
    """Like :func:`detect_format`, but telling the compact and original SGD forms apart.

    Raises:
        DatasetFormatError: As for :func:`detect_format`.
    """
    if path.is_dir():
        dialogue_files(path)
        return "sgd_original"
    if not path.exists():
        raise DatasetFormatError(f"{path}: no such file or folder")
    first_keys: list[str] | None = None
    with closing(iter_records(path, container_of(path))) as records:
        for record in islice(records, _SNIFF_RECORDS):
            variant = classify(record.value)
            if variant is not None:
                return variant
            if first_keys is None and isinstance(record.value, Mapping):
                first_keys = sorted(record.value)
    raise DatasetFormatError(_unknown_format_message(path, first_keys))


def classify(record: Any) -> Variant | None:
    """The format of one parsed record, from the keys of its first turn (None if unknown)."""
    turns = record.get("turns") if isinstance(record, Mapping) else None
    if not isinstance(turns, list) or not turns or not isinstance(turns[0], Mapping):
        return None
    keys = turns[0].keys()
    if "s" in keys or "t" in keys:
        return "sgd_compact"
    if "speaker" in keys or "utterance" in keys:
        return "sgd_original"
    # turn_number too: the first turn may be the malformed part (no user_msg).
    if "user_msg" in keys or "turn_number" in keys:
        return "mtg"
    return None


def dialogue_files(folder: Path) -> list[Path]:
    """The dialogue files of an SGD release folder, in name order, without ``schema.json``.

    Raises:
        DatasetFormatError: The folder holds no ``.json`` dialogue file.
    """
    files = sorted(
        path
        for path in folder.iterdir()
        if path.is_file()
        and path.name.lower() != SGD_SCHEMA_FILE
        and path.name.lower().removesuffix(".gz").endswith(".json")
    )
    if not files:
        raise DatasetFormatError(
            f"{folder}: no dialogue files (*.json besides {SGD_SCHEMA_FILE}); for the SGD "
            "release pass one split folder such as .../train, or pass a dialogue file"
        )
    return files


def _unknown_format_message(path: Path, first_keys: list[str] | None) -> str:
    if first_keys is None and _is_blank(path):
        return f"{path}: the file is empty"
    if first_keys is None:
        found = f"no readable JSON object in its first {_SNIFF_RECORDS} records"
    elif "service_name" in first_keys:
        found = f"an SGD service schema ({SGD_SCHEMA_FILE}), not dialogues"
    else:
        found = f"records with keys {first_keys}"
    return (
        f"{path}: unknown dialogue format; found {found}. Expected turns with 'user_msg' "
        "(Mind the Goal), 's'/'t' (compact SGD) or 'speaker'/'utterance' (SGD release); "
        "`todeval evaluate` also reads agent transcripts ('messages'), tau2 results "
        "('simulations'), memory benchmarks and MS-TOD sessions, and ProactiveEval logs "
        "('environment'): see docs/INPUTS.md"
    )


def _is_blank(path: Path) -> bool:
    """A plain file with nothing but white space (a compressed one is never called blank)."""
    try:
        if path.suffix == ".gz" or not path.is_file():
            return False
        with path.open("rb") as handle:
            head = handle.read(4096)
        return not head.strip() and path.stat().st_size <= 4096
    except OSError:
        return False
