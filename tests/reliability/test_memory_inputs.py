"""Memory inputs: MS-TOD session files (paper 001, Figure 12) and ``build-bench`` benchmarks.

Both are read as one JSON document, so damage that makes the document unparsable (deep
nesting, over-long numbers) is a file-level matter (a usage error), tested apart.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given

from tests.reliability import memory_records
from tests.reliability.damage import DEEP, LONG_DIGITS, VALUE_DAMAGE, Case, batch, write_json_list
from tests.reliability.properties import (
    RECORDS_PER_LOADER,
    Tally,
    describes,
    leads_to,
    reliability,
)
from todeval.evals.datasets.errors import DatasetFormatError
from todeval.evals.datasets.evaluation_records import load_evaluation_records
from todeval.evals.datasets.ms_tod_loader import load_memory_bench
from todeval.evals.datasets.ms_tod_release import load_ms_tod_individual
from todeval.evals.record_views import EvaluationRecord
from todeval.evals.schema import RecordError

# Damage these loaders handle record by record (see the module docstring for the rest).
PER_RECORD = tuple(kind for kind in VALUE_DAMAGE if kind not in ("deep_nesting", "long_number"))


def _session_id(record: dict[str, Any], name: str, index: int) -> None:
    record["session_id"] = name


def _individual_id(record: dict[str, Any], name: str, index: int) -> None:
    record["individual_id"] = name
    for number, item in enumerate(record["eval"]):
        item["eval_id"] = f"{name}/e{number}"


def _errors_by_line(errors: list[RecordError], file: str, count: int) -> dict[int, RecordError]:
    """Each error described and on a line of the file; the first error of each line."""
    by_line: dict[int, RecordError] = {}
    for error in errors:
        describes(error, file)
        assert error.line is not None and 1 <= error.line <= count, error
        by_line.setdefault(error.line, error)
    return by_line


def _check_evaluated(path: Path, expected: set[str]) -> None:
    """``todeval evaluate``'s reader: every expected item is a record, every error described."""
    items = list(load_evaluation_records(path))
    for item in items:
        if isinstance(item, RecordError):
            describes(item, str(path))
    evaluated = {item.record_id for item in items if isinstance(item, EvaluationRecord)}
    assert expected <= evaluated, expected - evaluated


def test_ms_tod_session_files(tmp_path: Path) -> None:
    tally = Tally("MS-TOD sessions: load_ms_tod_individual (+ load_evaluation_records)")

    @reliability()
    @given(batch(memory_records.ms_tod_session, _session_id, text_damage=False, kinds=PER_RECORD))
    def holds(cases: list[Case]) -> None:
        tally.add(cases)
        path = write_json_list(tmp_path / "sessions.json", cases)
        individual, errors = load_ms_tod_individual(path)
        by_line = _errors_by_line(errors, str(path), len(cases))
        stored = {session.session_id for session in individual.sessions}
        items = {item.eval_id for item in individual.eval}
        first: set[str] = set()
        for position, case in enumerate(cases, start=1):
            error = by_line.get(position)
            if case.well_formed:
                assert error is None and case.record_id in stored | items, error
                first.add(case.record_id)
            elif case.damage == "duplicate_id" and case.record_id in first:
                assert error is not None and error.field == f"sessions.{position - 1}.session_id"
            elif case.must_fail:
                assert error is not None, case
            if error is not None:
                assert leads_to(error.field, case.where, f"sessions.{position - 1}"), error
        confirming = {c.record_id for c in cases if c.well_formed and c.value["exist_confirmation"]}
        _check_evaluated(path, confirming)

    holds()
    assert tally.records >= RECORDS_PER_LOADER, tally


def test_memory_benchmarks(tmp_path: Path) -> None:
    tally = Tally("memory benchmark individuals: load_memory_bench (+ load_evaluation_records)")

    @reliability()
    @given(
        batch(memory_records.memory_individual, _individual_id, text_damage=False, kinds=PER_RECORD)
    )
    def holds(cases: list[Case]) -> None:
        tally.add(cases)
        path = write_json_list(tmp_path / "bench.json", cases, key="individuals")
        bench, errors = load_memory_bench(path)
        by_line = _errors_by_line(errors, str(path), len(cases))
        loaded = {individual.individual_id: individual for individual in bench.individuals}
        first: set[str] = set()
        for position, case in enumerate(cases, start=1):
            error = by_line.get(position)
            if case.well_formed:
                individual = loaded[case.record_id]
                assert error is None, error
                assert len(individual.sessions) == len(case.value["sessions"])
                assert len(individual.eval) == len(case.value["eval"])
                first.add(case.record_id)
            elif case.damage == "duplicate_id" and case.record_id in first:
                assert error is not None and error.field is not None
                assert error.field.endswith("individual_id"), error
            elif case.must_fail:
                assert error is not None, case
            if error is not None and case.damage != "duplicate_id":
                # Damaged sessions show where an eval item names them.
                at = f"individuals.{position - 1}"
                assert leads_to(error.field, case.where, at, {"sessions": ["eval"]}), error
        wanted = {item["eval_id"] for c in cases if c.well_formed for item in c.value["eval"]}
        _check_evaluated(path, wanted)

    holds()
    assert tally.records >= RECORDS_PER_LOADER, tally


# -- whole files, and the checks spelled out ---------------------------------------------

SESSION = {
    "session_id": "s1",
    "domain": "Restaurants_2",
    "intent": "ReserveRestaurant",
    "content": [{"speaker": "user", "utterance": "Book Sino."}],
    "task_goal": {"restaurant_name": "Sino"},
}


def _session_file(tmp_path: Path, poison: str) -> Path:
    path = tmp_path / "sessions.json"
    path.write_text(json.dumps([SESSION])[:-1] + ', {"session_id": ' + poison + "}]")
    return path


def _bench_file(tmp_path: Path, poison: str) -> Path:
    path = tmp_path / "bench.json"
    bench = {"individuals": [{"individual_id": "u1", "sessions": [SESSION], "eval": []}]}
    path.write_text(json.dumps(bench)[:-2] + ', {"individual_id": ' + poison + "}]}")
    return path


POISONS = ["[" * DEEP + "]" * DEEP, LONG_DIGITS]  # too deep for Python's parser; too long a number


@pytest.mark.parametrize("poison", POISONS, ids=["deep", "long-number"])
@pytest.mark.parametrize(
    ("write", "load"),
    [(_session_file, load_ms_tod_individual), (_bench_file, load_memory_bench)],
    ids=["sessions", "bench"],
)
def test_unparsable_memory_files_are_usage_errors(
    tmp_path: Path, write: Any, load: Any, poison: str
) -> None:
    path = write(tmp_path, poison)
    with pytest.raises(DatasetFormatError, match=path.name):
        load(path)


@pytest.mark.parametrize("poison", POISONS, ids=["deep", "long-number"])
@pytest.mark.parametrize("write", [_session_file, _bench_file], ids=["sessions", "bench"])
def test_evaluate_reports_unparsable_memory_files(tmp_path: Path, write: Any, poison: str) -> None:
    """``todeval evaluate`` turns what the memory loaders raise into one usage error."""
    path = write(tmp_path, poison)
    with pytest.raises(DatasetFormatError, match=path.name):
        list(load_evaluation_records(path, "memory"))


def test_ms_tod_session_files_refuse_repeated_session_ids(tmp_path: Path) -> None:
    path = tmp_path / "sessions.json"
    path.write_text(json.dumps([SESSION, SESSION]))
    individual, errors = load_ms_tod_individual(path)
    assert len(individual.sessions) + len(individual.eval) == 1
    assert [(e.line, e.field) for e in errors] == [(2, "sessions.1.session_id")]


@pytest.mark.parametrize("kind", ["sessions", "bench"])
def test_memory_loaders_refuse_text_that_is_not_unicode(tmp_path: Path, kind: str) -> None:
    # An extra field: the schema's own text fields refuse lone surrogates already.
    broken = {**SESSION, "session_id": "s2", "note": "x\ud800"}
    errors: list[RecordError]
    if kind == "sessions":
        path = tmp_path / "sessions.json"
        path.write_text(json.dumps([SESSION, broken]))
        individual, errors = load_ms_tod_individual(path)
        field = "sessions.1.note"
    else:
        path = tmp_path / "bench.json"
        raw = {"individual_id": "u1", "sessions": [SESSION, broken], "eval": []}
        path.write_text(json.dumps({"individuals": [raw]}))
        bench, errors = load_memory_bench(path)
        [individual] = bench.individuals
        field = "individuals.0.sessions.1.note"
    assert [(e.line, e.dialogue_id, e.field) for e in errors] == [
        (2 if kind == "sessions" else 1, "s2" if kind == "sessions" else "u1/s2", field)
    ]
    assert [session.session_id for session in individual.sessions] == ["s1"]


def test_a_session_file_whose_individual_id_is_no_id_is_a_usage_error(tmp_path: Path) -> None:
    path = tmp_path / "sessions.json"
    path.write_text(json.dumps({"individual_id": [1], "sessions": [SESSION]}))
    with pytest.raises(DatasetFormatError, match="sessions.json: individual_id"):
        load_ms_tod_individual(path)
    with pytest.raises(DatasetFormatError, match="sessions.json: individual_id"):
        list(load_evaluation_records(path, "memory"))
