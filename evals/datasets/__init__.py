"""Dataset loaders: Mind the Goal dialog JSON and Schema-Guided Dialogue, as one stream.

Example:
    >>> from evals.datasets import load_dialogues, split_records
    >>> dialogues, errors = split_records(load_dialogues("dialogues.jsonl"))  # doctest: +SKIP
"""

from todeval.evals.datasets.detect import detect_format
from todeval.evals.datasets.errors import DatasetFormatError
from todeval.evals.datasets.loader import Format, load_dialogues, split_records

__all__ = ["DatasetFormatError", "Format", "detect_format", "load_dialogues", "split_records"]
