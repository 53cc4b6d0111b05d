"""Dialogue inputs (Mind the Goal, SGD compact and as released, ATOD) under generated records.

Each format's batches of well-formed and damaged records are written to a file and read three
ways: by the format's own loader, by ``todeval evaluate``'s :func:`load_evaluation_records`
(the file's kind detected, as the CLI does) and by ``todeval track-goals``'
:func:`load_goal_tracking_records`; the property is :func:`check_in_order`'s.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given

from tests.reliability import records
from tests.reliability.damage import Case, batch, write_json_list, write_jsonl
from tests.reliability.properties import RECORDS_PER_LOADER, Tally, check_in_order, reliability
from todeval.evals.datasets import load_dialogues
from todeval.evals.datasets.atod import load_atod
from todeval.evals.datasets.evaluation_records import load_evaluation_records
from todeval.evals.datasets.goal_tracking import load_goal_tracking_records
from todeval.evals.record_views import EvaluationRecord


def _dialogue_id(record: dict[str, Any], name: str, index: int) -> None:
    record["dialogue_id"] = name


def _mtg_id(record: dict[str, Any], name: str, index: int) -> None:
    record["dialog_id" if index % 2 else "dialogue_id"] = name  # both spellings are read


def _by_id(item: Any) -> str:
    return str(item.dialogue_id)


def _by_record_id(item: Any) -> str:
    return str(item.record_id)


# A goal damaged in ATOD's goal_list shows where a turn names it.
_REFERS = {"goal_list": ["turns"]}


@pytest.mark.parametrize(
    ("build", "set_id", "name", "read", "tracker_format"),
    [
        pytest.param(
            records.mind_the_goal,
            _mtg_id,
            "mtg.jsonl",
            lambda path: load_dialogues(path, "mtg"),
            "mtg",
            id="mind-the-goal",
        ),
        pytest.param(
            records.sgd_compact,
            _dialogue_id,
            "sgd.jsonl",
            lambda path: load_dialogues(path, "sgd"),
            "sgd",
            id="sgd-compact",
        ),
        pytest.param(
            records.sgd_release,
            _dialogue_id,
            "dialogues_001.json",  # a JSON list: damage to one record's text breaks the file
            lambda path: load_dialogues(path, "sgd"),
            "sgd",
            id="sgd-release",
        ),
        pytest.param(records.atod, _dialogue_id, "atod.jsonl", load_atod, "atod", id="atod"),
    ],
)
def test_dialogue_inputs(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    build: Any,
    set_id: Any,
    name: str,
    read: Any,
    tracker_format: str,
) -> None:
    # Read three ways: the format's loader, evaluate's and track-goals'.
    tally = Tally(f"{request.node.callspec.id} (+ load_evaluation_records, goal tracking)")
    lines = name.endswith(".jsonl")

    @reliability()
    @given(batch(build, set_id, text_damage=lines))
    def holds(cases: list[Case]) -> None:
        tally.add(cases)
        path = (write_jsonl if lines else write_json_list)(tmp_path / name, cases)
        file = str(path)
        check_in_order(cases, read(path), file=file, loaded_id=_by_id, refers=_REFERS)
        evaluated = load_evaluation_records(path)
        check_in_order(cases, evaluated, file=file, loaded_id=_by_record_id, refers=_REFERS)
        tracked = load_goal_tracking_records(path, tracker_format, None)
        check_in_order(cases, tracked, file=file, loaded_id=_by_id, refers=_REFERS)

    holds()
    assert tally.records >= RECORDS_PER_LOADER, tally


# A system frame acting for an intent the user never made active (its service call names
# another intent), whose offered value the user then takes up.
CALL_FOR_ANOTHER_INTENT = {
    "dialogue_id": "call-for-another-intent",
    "turns": [
        {"s": "U", "t": "Find me a restaurant.", "f": [
            {"svc": "Restaurants_2", "intent": "FindRestaurants", "sv": {}, "req": []}]},
        {"s": "S", "t": "Sino is nice.", "f": [
            {"svc": "Restaurants_2", "act": [["OFFER", "restaurant_name", ["Sino"]]],
             "call": ["ReserveRestaurant", {}]}]},
        {"s": "U", "t": "Sino it is.", "f": [
            {"svc": "Restaurants_2", "intent": "FindRestaurants",
             "sv": {"restaurant_name": ["Sino"]}, "req": []}]},
    ],
}  # fmt: skip


def test_sgd_gold_when_the_system_acts_for_an_intent_the_user_never_pursued(
    tmp_path: Path,
) -> None:
    path = tmp_path / "sgd.jsonl"
    path.write_text(json.dumps(CALL_FOR_ANOTHER_INTENT) + "\n")
    [record] = load_evaluation_records(path)
    assert isinstance(record, EvaluationRecord) and record.atod is not None
    # The one goal the user pursued; Sino came from no goal of the user's, so no dependency.
    [goal] = record.atod.goal_list
    assert (goal.intent, goal.slot_values, goal.dependencies) == (
        "FindRestaurants",
        {"restaurant_name": "Sino"},
        [],
    )
