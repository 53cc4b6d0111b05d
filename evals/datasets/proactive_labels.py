"""Labelled ProactiveEval records: guidance dialogues and candidate target plans (JSON Lines).

The bundled sample's ``labelled/guidance_dialogues.jsonl`` and ``labelled/target_plans.jsonl``
(scored by the todeval team, see its README) and any file of the same shape. A bad line becomes
a :class:`~evals.schema.RecordError` naming the line, the id and the field; the others load.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from todeval.evals.datasets.errors import duplicate_id, error_from_exception
from todeval.evals.datasets.jsonio import container_of, iter_records
from todeval.evals.proactive_schema import GuidanceDialogue, LabelledPlan
from todeval.evals.schema import RecordError

M = TypeVar("M", GuidanceDialogue, LabelledPlan)


def load_guidance_dialogues(path: str | Path) -> Iterator[GuidanceDialogue | RecordError]:
    """Guidance dialogues from a ``.jsonl`` (or ``.json`` list) file, in file order."""
    return _load(Path(path), GuidanceDialogue.model_validate)


def load_target_plans(path: str | Path) -> Iterator[LabelledPlan | RecordError]:
    """Candidate target plans from a ``.jsonl`` (or ``.json`` list) file, in file order."""
    return _load(Path(path), LabelledPlan.model_validate)


def _load(path: Path, convert: Callable[[Any], M]) -> Iterator[M | RecordError]:
    container = container_of(path)
    seen: set[str] = set()
    for record in iter_records(path, container):
        if record.error is not None:
            yield RecordError(
                file=str(path), line=record.position, field=record.field, message=record.error
            )
            continue
        raw_id = record.value.get("id") if isinstance(record.value, dict) else None
        try:
            item = convert(record.value)
        except ValueError as exc:
            error = error_from_exception(exc, file=str(path), line=record.position, raw=None)
            yield error.model_copy(update={"dialogue_id": str(raw_id) if raw_id else None})
            continue
        if item.eval_id in seen:
            yield duplicate_id(str(path), record.position, item.eval_id, "earlier in this file")
            continue
        seen.add(item.eval_id)
        yield item


def only_records(items: Iterator[M | RecordError]) -> list[M]:
    """The records of a stream, dropping errors (for labelled sets known to be clean)."""
    return [item for item in items if not isinstance(item, RecordError)]
