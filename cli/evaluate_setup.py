"""What ``todeval evaluate`` (and ``todeval experiment``) runs under: suites, judges, inputs.

The command's defaults, ``--suite`` and ``--judge`` parsing, checking every judge spec before
the first record, telling each input's kind, the run's context (routes from the corpus, one
memory bank per input) and the batch work the local judges do per chunk of records.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, replace
from itertools import islice
from pathlib import Path
from typing import Any

from cli.common import UsageError, input_path
from cli.config import build_context
from cli.goal_shift import check_judges as check_shift_judges
from cli.gsr import corpus_routes
from evals.datasets.errors import DatasetFormatError
from evals.datasets.evaluation_records import (
    RecordKind,
    detect_record_kind,
    load_evaluation_records,
)
from evals.record_views import SUITES, EvaluationRecord, Suite, atod_view
from evals.schema import RecordError
from nodes.context import Context
from nodes.goal_success.judges.segmentation import segmentation_judge
from nodes.goal_success.judges.turn_quality import turn_quality_teacher
from nodes.goal_tracking.judges.goal_extraction import goal_extractor
from nodes.judges.spec import JudgeConfigError, JudgeSpecError
from nodes.memory.judges.memory_judger import memory_judger
from stores.memory_bank import collection_for

EVALUATE_DEFAULTS: dict[str, Any] = {"vector_backend": "memory"}
"""Offline evaluation keeps each dialogue's goal vectors in process (about twice as fast as
Chroma on disk, which serves the online tracker); a config file or flag may choose Chroma."""


def parse_suites(raw: str) -> list[Suite]:
    """``all`` or a comma list of suite names."""
    names = [name.strip() for name in raw.split(",") if name.strip()]
    if names == ["all"]:
        return list(SUITES)
    unknown = [name for name in names if name not in SUITES]
    if unknown or not names:
        raise UsageError(f"--suite {raw!r}: expected all or a comma list of {', '.join(SUITES)}")
    return [suite for suite in SUITES if suite in names]


def judge_overrides(pairs: Sequence[str]) -> dict[str, Any]:
    """``ROLE=SPEC`` flags as Context settings (a role may drop ``_judge``; teachers split)."""
    overrides: dict[str, Any] = {}
    known = set(asdict(Context()))
    for pair in pairs:
        role, sep, spec = pair.partition("=")
        role, spec = role.strip(), spec.strip()
        name = role if role in known else f"{role}_judge"
        if not sep or not spec or name not in known:
            raise UsageError(f"--judge {pair!r}: expected ROLE=SPEC with a known role")
        teachers = [s.strip() for s in spec.split(",") if s.strip()]
        overrides[name] = teachers if name == "teachers" else spec
    return overrides


def command_context(config: str | None, judges: Sequence[str], schema: str | None) -> Context:
    """The context ``--config``, ``--judge ROLE=SPEC`` and ``--schema`` give.

    Over the command's defaults (:data:`EVALUATE_DEFAULTS`); flags beat the config file.
    """
    overrides = judge_overrides(judges) | {
        "schema_path": str(input_path(schema)) if schema else None,
    }
    return build_context(config, overrides, base=EVALUATE_DEFAULTS)


def check_judges(context: Context, suites: Sequence[Suite]) -> None:
    """Build every judge the suites will use: a bad spec is one error now, not one per record."""
    try:
        if "gsr" in suites:
            segmentation_judge(context.segmentation_judge, context.llm_max_retries)
            for spec in context.teachers:
                turn_quality_teacher(spec, context.llm_max_retries)
        if "goals" in suites:
            goal_extractor(context.goal_extraction_judge, context.schema_path)
        if "shift" in suites:
            check_shift_judges(context)
        if "memory" in suites and context.memory_judger != "none":
            getattr(memory_judger(context.memory_judger), "model", None)  # loads a local model
    except (JudgeSpecError, JudgeConfigError, FileNotFoundError, DatasetFormatError) as error:
        raise UsageError(str(error)) from error


def detect_kinds(sources: Sequence[Path]) -> list[RecordKind]:
    """What each input holds (a UsageError naming the file when it is of no known kind)."""
    try:
        return [detect_record_kind(source) for source in sources]
    except DatasetFormatError as error:
        raise UsageError(str(error)) from error


def run_context(
    context: Context, inputs: Sequence[tuple[Path, RecordKind]], limit: int | None
) -> Context:
    """The context a corpus runs under: routes from the corpus, one memory bank per input."""
    updates: dict[str, Any] = {}
    if not context.routes:
        routes: dict[str, str] = {}
        for source, kind in inputs:
            if kind in ("mtg", "sgd"):
                routes |= corpus_routes(source, kind, limit)
        updates["routes"] = routes
    memory = [source for source, kind in inputs if kind == "memory"]
    if memory and context.memory_bank_collection == Context().memory_bank_collection:
        updates["memory_bank_collection"] = collection_for(memory)
    return replace(context, **updates)


def corpus_records(
    inputs: Sequence[tuple[Path, RecordKind]], schema_path: str | None, limit: int | None
) -> Iterator[EvaluationRecord | RecordError]:
    """Every input's records in turn (lazily), the first ``limit`` in all."""
    records: Iterator[EvaluationRecord | RecordError] = (
        record
        for source, kind in inputs
        for record in load_evaluation_records(source, kind, schema_path=schema_path)
    )
    return islice(records, limit) if limit is not None else records


def judge_preparer(
    context: Context, suites: Sequence[Suite]
) -> Callable[[Sequence[EvaluationRecord]], None]:
    """Batch work for a chunk of records: the local judges embed all its texts at once.

    The graph's nodes get the same (cached) judges, so they find the vectors ready; about
    twice as fast as one small batch per dialogue.
    """
    segmenter = segmentation_judge(context.segmentation_judge, context.llm_max_retries)
    teachers = [turn_quality_teacher(spec, context.llm_max_retries) for spec in context.teachers]
    extractor = goal_extractor(context.goal_extraction_judge, context.schema_path)

    def prepare(records: Sequence[EvaluationRecord]) -> None:
        dialogues = [record.dialogue for record in records]
        if "gsr" in suites:
            segmenter.prepare(dialogues)
            for teacher in teachers:
                teacher.prepare(dialogues)
        if "goals" in suites:
            extractor.prepare([text for record in records for text in _utterances(record)])

    return prepare


def _utterances(record: EvaluationRecord) -> list[str]:
    return [turn.utterance for turn in (record.atod or atod_view(record.dialogue)).turns]
