"""Any supported input as :class:`~evals.record_views.EvaluationRecord` s (``todeval evaluate``).

The kind of file is told from its first record:

- ``{"simulations": ...}`` (tau2 / AgentChangeBench results) or JSONL lines with ``messages``
  (agent transcripts) -> conversations;
- ``{"individuals": ...}`` (``todeval memory build-bench``) or a list of MS-TOD sessions
  (Figure 12) -> memory items, one per evaluation item, with the user's stored sessions;
- ATOD-annotated dialogues -> ATOD records (their goal gold kept);
- SGD -> dialogues with ATOD gold derived from the acts (:mod:`evals.datasets.sgd_goals`);
- Mind the Goal -> dialogues;
- JSONL/JSON records with an ``environment`` (a ProactiveEval environment, its reference
  ``target``/``sub_target``, the agent's ``plan`` and/or guidance ``messages``) -> proactive
  records (:func:`proactive_case`).

Every loader's record errors pass through as :class:`~evals.schema.RecordError` s.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import closing
from functools import partial
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from todeval.evals.datasets.atod import load_atod, looks_like_atod
from todeval.evals.datasets.detect import detect_format
from todeval.evals.datasets.errors import DatasetFormatError
from todeval.evals.datasets.goal_tracking import is_sgd_release, sgd_gold
from todeval.evals.datasets.jsonio import container_of, count_jsonl_records, iter_records
from todeval.evals.datasets.loader import load_dialogues
from todeval.evals.datasets.ms_tod_loader import load_memory_bench
from todeval.evals.datasets.ms_tod_release import load_ms_tod_individual, looks_like_ms_tod
from todeval.evals.datasets.sgd_schema import load_sgd_schema
from todeval.evals.datasets.tau2 import load_goal_shift_run
from todeval.evals.goal_tracking_schema import AtodDialogue
from todeval.evals.memory_schema import MemoryBench
from todeval.evals.proactive_schema import canonical_domain
from todeval.evals.record_views import (
    EvaluationRecord,
    MemoryItem,
    ProactiveCase,
    atod_record,
    atod_view,
    conversation_record,
    dialogue_record,
    memory_record,
    proactive_record,
)
from todeval.evals.schema import Dialogue, RecordError

RecordKind = Literal["conversations", "memory", "atod", "sgd", "mtg", "proactive"]


def detect_record_kind(path: str | Path) -> RecordKind:
    """What a file holds, from its first record (see the module docstring).

    Raises:
        DatasetFormatError: The file is missing, empty or of no known kind.
    """
    source = Path(path)
    if source.is_file():
        value = _first_value(source)
        if isinstance(value, dict):
            if isinstance(value.get("environment"), dict):  # before "messages": guidance too
                return "proactive"
            if "simulations" in value or "messages" in value:
                return "conversations"
            if "individuals" in value or looks_like_ms_tod([value]) or looks_like_ms_tod(value):
                return "memory"
        if looks_like_atod(source):
            return "atod"
    return detect_format(source)


ONE_RECORD_PER_LINE: frozenset[RecordKind] = frozenset({"sgd", "mtg", "atod", "proactive"})
"""Kinds whose JSON Lines files hold one record (or one unreadable line) per line."""


def count_evaluation_records(path: str | Path, kind: RecordKind) -> int | None:
    """How many records :func:`load_evaluation_records` yields, when a line count tells.

    None when it cannot be known without reading the records: a folder, a JSON list, a tau2
    results file, a memory benchmark (one record per item, not per line).
    """
    source = Path(path)
    if kind not in ONE_RECORD_PER_LINE or not source.is_file():
        return None
    try:
        if container_of(source) != "jsonl":
            return None
    except DatasetFormatError:
        return None
    return count_jsonl_records(source)


def load_evaluation_records(
    path: str | Path, kind: RecordKind | None = None, *, schema_path: str | Path | None = None
) -> Iterator[EvaluationRecord | RecordError]:
    """Every record of the file with its views, or the error that kept it out."""
    source = Path(path)
    file = str(source)
    chosen = kind or detect_record_kind(source)
    if chosen == "conversations":
        for conversation in load_goal_shift_run(source).records:
            if isinstance(conversation, RecordError):
                yield conversation
            else:
                yield _viewed(
                    partial(conversation_record, conversation),
                    file=file,
                    record_id=conversation.dialogue_id,
                    field="messages",
                )
    elif chosen == "memory":
        yield from _memory_records(source)
    elif chosen == "atod":
        for atod in load_atod(source):
            if isinstance(atod, RecordError):
                yield atod
            else:
                yield _viewed(partial(atod_record, atod), file=file, record_id=atod.dialogue_id)
    elif chosen == "sgd":
        schema = load_sgd_schema(schema_path) if schema_path else None
        release: bool | None = None  # told from the file once a record needs it
        for dialogue in load_dialogues(source, "sgd"):
            if isinstance(dialogue, RecordError):
                yield dialogue
                continue
            release = is_sgd_release(source) if release is None else release
            gold = sgd_gold(dialogue, schema, file=file, release=release)
            if isinstance(gold, RecordError):
                yield gold
            else:
                yield _viewed(
                    partial(_with_gold, dialogue, gold), file=file, record_id=dialogue.dialogue_id
                )
    elif chosen == "proactive":
        yield from _proactive_records(source)
    elif chosen == "mtg":
        for dialogue in load_dialogues(source, "mtg"):
            if isinstance(dialogue, RecordError):
                yield dialogue
            else:
                yield _viewed(
                    partial(dialogue_record, dialogue), file=file, record_id=dialogue.dialogue_id
                )
    else:  # pragma: no cover - Literal exhausted
        raise DatasetFormatError(f"{source}: unknown record kind {chosen!r}")


def _with_gold(dialogue: Dialogue, gold: AtodDialogue) -> EvaluationRecord:
    return dialogue_record(dialogue).model_copy(update={"atod": gold})


def _viewed(
    build: Callable[[], EvaluationRecord],
    *,
    file: str,
    record_id: str,
    field: str = "turns",
) -> EvaluationRecord | RecordError:
    """The record with its views, or an error when it loads but leaves nothing to evaluate.

    A transcript of assistant messages only, or a dialogue whose every utterance is empty,
    is valid input with no user turn to judge: the dialogue view (and the goal tracker's view
    of it) cannot be built, and that is this record's error, not the run's.
    """
    try:
        record = build()
        if record.atod is None:
            atod_view(record.dialogue)  # the goal tracker reads every record through it
    except ValueError:  # pydantic's ValidationError: a view with no turn
        return RecordError(
            file=file,
            dialogue_id=record_id,
            field=field,
            message="no user turn with text: nothing to evaluate",
        )
    return record


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
    yield from errors  # the loaders refuse what results.jsonl could not hold (lone surrogates)
    file = str(source)
    for individual in bench.individuals:
        for item in individual.eval:
            memory = MemoryItem(
                individual_id=individual.individual_id, item=item, sessions=individual.sessions
            )
            yield _viewed(
                partial(memory_record, memory), file=file, record_id=item.eval_id, field="context"
            )


def proactive_case(value: Any) -> ProactiveCase:
    """A ProactiveEval record: a release item with the agent's ``plan`` and/or ``messages``.

    Lenient as the release loader is about key spellings.

    Raises:
        ValueError: The record is not an object or a field is missing or malformed.
    """
    if not isinstance(value, dict):
        raise ValueError("not a JSON object")
    reference = value.get("reference") or {
        "target": value.get("target"),
        "sub_target": _sub_targets(value),
    }
    plan = value.get("plan")
    if isinstance(plan, dict):
        plan = {"target": plan.get("target"), "sub_target": _sub_targets(plan)}
    return ProactiveCase(
        eval_id=str(value.get("id") or value.get("eval_id") or ""),
        domain=canonical_domain(str(value.get("domain") or "unknown")),
        environment=value.get("environment"),
        reference=reference,
        plan=plan,
        messages=value.get("messages"),
    )


def _sub_targets(value: dict[str, Any]) -> Any:
    for key in ("sub_target", "sub-target", "sub_targets", "sub-targets"):
        if key in value:
            return value[key]
    return None


def _proactive_records(source: Path) -> Iterator[EvaluationRecord | RecordError]:
    file = str(source)
    for raw in iter_records(source, container_of(source)):
        rid = raw.value.get("id") if isinstance(raw.value, dict) else None
        where = {"file": file, "line": raw.position, "dialogue_id": rid}
        if raw.error is not None:
            yield RecordError(**where, message=raw.error)
            continue
        try:
            case = proactive_case(raw.value)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(part) for part in first["loc"])
            yield RecordError(**where, field=field, message=first["msg"])
            continue
        except ValueError as exc:
            yield RecordError(**where, message=str(exc))
            continue
        yield _viewed(partial(proactive_record, case), file=file, record_id=case.eval_id)
