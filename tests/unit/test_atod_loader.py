"""ATOD loader: Listing 1-2 records from JSON and JSON Lines, malformed records, sniffing."""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from todeval.evals.datasets import DatasetFormatError
from todeval.evals.datasets.atod import load_atod, looks_like_atod
from todeval.evals.goal_tracking_schema import AtodDialogue
from todeval.evals.schema import RecordError


def atod_record(dialogue_id: str = "atod-1") -> dict[str, Any]:
    """A small ATOD dialogue in the shape of Listings 1 and 2, with the paper's casing."""
    goals = [
        {"id": "g1", "domain": "Hotels_1", "intent": "ReserveHotel", "slots": ["location"],
         "slot_values": {"location": "Chicago"}, "dependencies": [],
         "content": "Book a hotel in Chicago", "core_content": "hotel",
         "classification_method": "pre_defined"},
        {"id": "g2", "domain": "Payment_1", "intent": "MakePayment", "dependencies": ["g1"]},
    ]  # fmt: skip
    turns = [
        {"turn_id": 1, "speaker": "USER", "utterance": "I need to book a hotel in Chicago.",
         "goal_status_changes": [{"goal_id": "g1", "new_status": "Open"}],
         "all_goals": {"g1": "open", "g2": "Not_Mentioned"}},
        {"turn_id": 2, "speaker": "assistant", "utterance": "Booked. Shall I pay now?",
         "goal_status_changes": [{"goal_id": "g1", "new_status": "completed"},
                                 {"goal_id": "g2", "new_status": "pending"}],
         "all_goals": {"g1": "completed", "g2": "pending"}},
        {"turn_id": 3, "speaker": "USER", "utterance": "No, not now.",
         "goal_status_changes": [{"goal_id": "g2", "new_status": "ABANDONED"}],
         "all_goals": {"g1": "completed", "g2": "abandoned"}},
    ]  # fmt: skip
    return {
        "dialogue_id": dialogue_id,
        "complexity_class": "medium",
        "metadata": {"num_goals": 2, "interleaving": False},
        "goal_list": goals,
        "turns": turns,
    }


def write(path: Path, text: str) -> Path:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "wt", encoding="utf-8") as stream:
        stream.write(text)
    return path


def load(path: Path) -> tuple[list[AtodDialogue], list[RecordError]]:
    items = list(load_atod(path))
    dialogues = [item for item in items if isinstance(item, AtodDialogue)]
    return dialogues, [item for item in items if isinstance(item, RecordError)]


def broken(change: str) -> dict[str, Any]:
    """A record with one defect, named after it."""
    record = atod_record(change)
    turns, goals = record["turns"], record["goal_list"]
    if change == "bad-status":
        turns[2]["all_goals"]["g2"] = "done"
    elif change == "bad-change-status":
        turns[1]["goal_status_changes"][1]["new_status"] = "waiting"
    elif change == "unknown-goal":
        turns[2]["all_goals"]["g9"] = "open"
    elif change == "unknown-change-goal":
        turns[1]["goal_status_changes"].append({"goal_id": "g7", "new_status": "open"})
    elif change == "turn-ids":
        turns[2]["turn_id"] = 4
    elif change == "duplicate-goal":
        goals[1]["id"] = "g1"
    elif change == "unknown-dependency":
        goals[1]["dependencies"] = ["g0"]
    elif change == "bad-speaker":
        turns[0]["speaker"] = "narrator"
    elif change == "no-turns":
        record["turns"] = []
    return record


EXPECTED_FIELDS = {
    "bad-status": "turns.2.all_goals.g2",
    "bad-change-status": "turns.1.goal_status_changes.1.new_status",
    "unknown-goal": "turns.2.all_goals.g9",
    "unknown-change-goal": "turns.1.goal_status_changes.2.goal_id",
    "turn-ids": "turns.2.turn_id",
    "duplicate-goal": "goal_list.1.id",
    "unknown-dependency": "goal_list.1.dependencies.0",
    "bad-speaker": "turns.0.speaker",
    "no-turns": "turns",
}


@pytest.mark.parametrize("name", ["one.json", "one.json.gz"])
def test_one_object_loads_with_the_papers_casing(tmp_path: Path, name: str) -> None:
    record = atod_record()
    [dialogue], errors = load(write(tmp_path / name, json.dumps(record, indent=2)))
    assert errors == []
    assert dialogue.dialogue_id == "atod-1"
    assert dialogue.complexity_class == "medium"
    assert dialogue.metadata == {"num_goals": 2, "interleaving": False}
    assert [goal.id for goal in dialogue.goal_list] == ["g1", "g2"]
    assert dialogue.goal_list[0].slot_values == {"location": "Chicago"}
    assert dialogue.goal_list[1].dependencies == ["g1"]
    # Listing 1's extra goal fields are kept.
    assert dialogue.goal_list[0].model_dump()["classification_method"] == "pre_defined"
    assert [turn.speaker for turn in dialogue.turns] == ["USER", "SYSTEM", "USER"]
    assert dialogue.turns[0].goal_status_changes[0].new_status == "open"
    assert dialogue.turns[0].all_goals == {"g1": "open", "g2": "not_mentioned"}
    assert dialogue.final_statuses() == {"g1": "completed", "g2": "abandoned"}


@pytest.mark.parametrize("name", ["many.json", "many.json.gz", "many.jsonl", "many.jsonl.gz"])
def test_lists_and_lines(tmp_path: Path, name: str) -> None:
    records = [atod_record(f"d{i}") for i in range(3)]
    if ".jsonl" in name:
        text = "\n".join(json.dumps(record) for record in records) + "\n\n"
    else:
        text = json.dumps(records, indent=1)
    dialogues, errors = load(write(tmp_path / name, text))
    assert errors == []
    assert [dialogue.dialogue_id for dialogue in dialogues] == ["d0", "d1", "d2"]


def test_each_bad_record_is_reported_and_the_rest_load(tmp_path: Path) -> None:
    lines = [json.dumps(atod_record("good-1"))]
    lines += [json.dumps(broken(change)) for change in EXPECTED_FIELDS]
    lines.append('{"dialogue_id": "half-written", "turns": [')
    lines.append(json.dumps(atod_record("good-1")))  # a duplicate id
    lines.append(json.dumps(atod_record("good-2")))
    path = write(tmp_path / "mixed.jsonl", "\n".join(lines) + "\n")

    dialogues, errors = load(path)

    assert [dialogue.dialogue_id for dialogue in dialogues] == ["good-1", "good-2"]
    reported = [(error.line, error.dialogue_id, error.field) for error in errors]
    expected = [(line, change, field) for line, (change, field) in enumerate(
        EXPECTED_FIELDS.items(), start=2)]  # fmt: skip
    n = len(EXPECTED_FIELDS)
    expected += [(n + 2, "half-written", None), (n + 3, "good-1", "dialogue_id")]
    assert reported == expected
    assert all(error.file == str(path) for error in errors)
    by_id = {error.dialogue_id: error for error in errors}
    assert "'g9' is not in goal_list" in by_id["unknown-goal"].message
    assert "expected 3, got 4" in by_id["turn-ids"].message
    assert "invalid JSON" in by_id["half-written"].message
    assert "already used at line 1" in by_id["good-1"].message
    # One line for logs: where, which dialogue, which field.
    assert str(by_id["bad-status"]).startswith(
        f"{path}:2 dialogue 'bad-status' field 'turns.2.all_goals.g2': Input should be"
    )


def test_json_list_errors_name_the_record_index(tmp_path: Path) -> None:
    records = [atod_record("a"), broken("unknown-goal"), atod_record("c")]
    dialogues, errors = load(write(tmp_path / "list.json", json.dumps(records)))
    assert [dialogue.dialogue_id for dialogue in dialogues] == ["a", "c"]
    assert [(e.line, e.dialogue_id, e.field) for e in errors] == [
        (2, "unknown-goal", "turns.2.all_goals.g9")
    ]


def test_without_goal_list_any_goal_id_is_accepted(tmp_path: Path) -> None:
    record = atod_record()
    record["goal_list"] = []
    [dialogue], errors = load(write(tmp_path / "open.json", json.dumps(record)))
    assert errors == []
    assert dialogue.final_statuses() == {"g1": "completed", "g2": "abandoned"}


def test_a_record_that_is_not_an_object(tmp_path: Path) -> None:
    path = write(tmp_path / "odd.jsonl", '["not", "a", "dialogue"]\n' + json.dumps(atod_record()))
    dialogues, errors = load(path)
    assert len(dialogues) == 1
    assert [(error.line, error.dialogue_id) for error in errors] == [(1, None)]


def test_unreadable_files_raise_before_iteration(tmp_path: Path) -> None:
    with pytest.raises(DatasetFormatError, match="no such file"):
        load_atod(tmp_path / "missing.jsonl")
    with pytest.raises(DatasetFormatError, match="extension"):
        load_atod(write(tmp_path / "dialogues.txt", json.dumps(atod_record())))
    with pytest.raises(DatasetFormatError, match="empty file"):
        load_atod(write(tmp_path / "empty.json", ""))


def test_looks_like_atod(tmp_path: Path) -> None:
    atod_lines = ["not json", json.dumps(atod_record())]
    assert looks_like_atod(write(tmp_path / "a.jsonl.gz", "\n".join(atod_lines)))
    assert looks_like_atod(write(tmp_path / "a.json", json.dumps([atod_record()])))
    # A turn without an utterance first (a malformed record) is still ATOD by its others.
    record = atod_record()
    record["turns"].insert(0, {"turn_id": 0})
    assert looks_like_atod(write(tmp_path / "b.json", json.dumps(record)))

    sgd_release = {"dialogue_id": "1_00000", "services": ["Restaurants_2"],
                   "turns": [{"speaker": "USER", "utterance": "hi", "frames": []}]}  # fmt: skip
    sgd_compact = {"dialogue_id": "1_00000", "turns": [{"s": "U", "t": "hi", "f": []}]}
    mtg = {"dialog_id": "m", "turns": [{"turn_number": 1, "user_msg": "hi", "response": ""}]}
    no_utterance = copy.deepcopy(atod_record())
    for turn in no_utterance["turns"]:
        del turn["utterance"]
    for name, value in [("release.json", [sgd_release]), ("compact.json", sgd_compact),
                        ("mtg.json", mtg), ("bare.json", no_utterance)]:  # fmt: skip
        assert not looks_like_atod(write(tmp_path / name, json.dumps(value))), name
    assert not looks_like_atod(tmp_path / "missing.jsonl")
    assert not looks_like_atod(write(tmp_path / "empty.json", ""))
    assert not looks_like_atod(write(tmp_path / "notes.txt", json.dumps(atod_record())))
