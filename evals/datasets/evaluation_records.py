"""Any supported input as :class:`~evals.record_views.EvaluationRecord` s (``todeval evaluate``).

The kind of file is told from its first record:

- ``{"simulations": ...}`` (tau2 / AgentChangeBench results) or JSONL lines with ``messages``
  (agent transcripts) -> conversations;
- ``{"individuals": ...}`` (``todeval memory build-bench``) or a list of MS-TOD sessions
  (Figure 12) -> memory items, one per evaluation item, with the user's stored sessions;
- ATOD-annotated dialogues -> ATOD records (their goal gold kept);
- SGD -> dialogues with ATOD gold derived from the acts (:mod:`evals.datasets.sgd_goals`);
- Mind the Goal -> dialogues.

Every loader's record errors pass through as :class:`~evals.schema.RecordError` s.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any, Literal

from evals.datasets.atod import load_atod, looks_like_atod
from evals.datasets.detect import detect_format
from evals.datasets.errors import DatasetFormatError
from evals.datasets.jsonio import container_of, iter_records
from evals.datasets.loader import load_dialogues
from evals.datasets.ms_tod_loader import load_memory_bench
from evals.datasets.ms_tod_release import load_ms_tod_individual, looks_like_ms_tod
from evals.datasets.sgd_goals import sgd_gold_or_error
from evals.datasets.sgd_schema import load_sgd_schema
from evals.datasets.tau2 import load_goal_shift_run
from evals.memory_schema import MemoryBench
from evals.record_views import (
    EvaluationRecord,
    MemoryItem,
    atod_record,
    conversation_record,
    dialogue_record,
    memory_record,
)
from evals.schema import RecordError

RecordKind = Literal["conversations", "memory", "atod", "sgd", "mtg"]


def detect_record_kind(path: str | Path) -> RecordKind:
    """What a file holds, from its first record (see the module docstring).

    Raises:
        DatasetFormatError: The file is missing, empty or of no known kind.
    """
    source = Path(path)
    if source.is_file():
        value = _first_value(source)
        if isinstance(value, dict):
            if "simulations" in value or "messages" in value:
                return "conversations"
            if "individuals" in value or looks_like_ms_tod([value]) or looks_like_ms_tod(value):
                return "memory"
        if looks_like_atod(source):
            return "atod"
    return detect_format(source)


def load_evaluation_records(
    path: str | Path, kind: RecordKind | None = None, *, schema_path: str | Path | None = None
) -> Iterator[EvaluationRecord | RecordError]:
    """Every record of the file with its views, or the error that kept it out.

    Args:
        path: Any input ``todeval`` reads.
        kind: What it holds; None to detect it.
        schema_path: An SGD ``schema.json`` for naming SGD goals ``(service, intent)``.
    """
    source = Path(path)
    chosen = kind or detect_record_kind(source)
    if chosen == "conversations":
        for conversation in load_goal_shift_run(source).records:
            yield (
                conversation
                if isinstance(conversation, RecordError)
                else conversation_record(conversation)
            )
    elif chosen == "memory":
        yield from _memory_records(source)
    elif chosen == "atod":
        for atod in load_atod(source):
            yield atod if isinstance(atod, RecordError) else atod_record(atod)
    elif chosen == "sgd":
        schema = load_sgd_schema(schema_path) if schema_path else None
        for dialogue in load_dialogues(source, "sgd"):
            if isinstance(dialogue, RecordError):
                yield dialogue
            else:
                gold = sgd_gold_or_error(dialogue, schema, file=str(source))
                if isinstance(gold, RecordError):
                    yield gold
                else:
                    yield dialogue_record(dialogue).model_copy(update={"atod": gold})
    elif chosen == "mtg":
        for dialogue in load_dialogues(source, "mtg"):
            yield dialogue if isinstance(dialogue, RecordError) else dialogue_record(dialogue)
    else:  # pragma: no cover - Literal exhausted
        raise DatasetFormatError(f"{source}: unknown record kind {chosen!r}")


def _first_value(source: Path) -> Any:
    """The file's first record as parsed JSON (None when it has none or it is not JSON)."""
    with closing(iter_records(source, container_of(source))) as records:
        first = next(records, None)
    return first.value if first is not None else None


def _memory_records(source: Path) -> Iterator[EvaluationRecord | RecordError]:
    value = _first_value(source)
    errors: list[RecordError]
    if isinstance(value, dict) and "individuals" in value:
        bench, errors = load_memory_bench(source)
    else:
        individual, errors = load_ms_tod_individual(source)
        bench = MemoryBench(individuals=[individual])
    yield from errors
    for individual in bench.individuals:
        for item in individual.eval:
            yield memory_record(
                MemoryItem(
                    individual_id=individual.individual_id,
                    item=item,
                    sessions=individual.sessions,
                )
            )
