"""Dataset loaders: Mind the Goal files, SGD compact and SGD original release, bad input."""

from __future__ import annotations

import copy
import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from todeval.evals.datasets import (
    DatasetFormatError,
    detect_format,
    load_dialogues,
    split_records,
)
from todeval.evals.schema import Dialogue, RecordError
from todeval.stores.paths import data_dir


def mtg_record(dialog_id: str, n_turns: int = 2, **extra: Any) -> dict[str, Any]:
    """A Mind the Goal record as paper 004 Appendix E shows it, with yes/no gold labels."""
    turns = [
        {
            "turn_number": number,
            "user_msg": f"question {number} of {dialog_id} — café ☕",
            "response": f"answer {number}",
            "source_urls": [f"https://kb.example/{number}"],
            "source_names": [f"KB {number}"],
            "source_snippets": [f"snippet {number}"],
            "is_new_goal": "yes" if number in (1, 3) else "no",
        }
        for number in range(1, n_turns + 1)
    ]
    return {"dialog_id": dialog_id, "turns": turns, **extra}


def write_jsonl(path: Path, lines: list[str]) -> Path:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "wt", encoding="utf-8") as stream:
        stream.write("\n".join(lines) + "\n")
    return path


def write_json(path: Path, value: Any, indent: int | None = 1) -> Path:
    # Indented by default: the list reader must skip whitespace between records.
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "wt", encoding="utf-8") as stream:
        json.dump(value, stream, ensure_ascii=False, indent=indent)
    return path


def load(path: Path, format: Any = "auto") -> tuple[list[Dialogue], list[RecordError]]:
    return split_records(load_dialogues(path, format))


# --- Mind the Goal ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["one.json", "one.json.gz"])
def test_mtg_single_object_json(tmp_path: Path, name: str) -> None:
    record = mtg_record("d-1", n_turns=3, metadata={"domain": "hr"})
    dialogues, errors = load(write_json(tmp_path / name, record))
    assert errors == []
    [dialogue] = dialogues
    assert dialogue.dialogue_id == "d-1"
    assert dialogue.metadata == {"domain": "hr"}
    assert [t.user_msg for t in dialogue.turns] == [t["user_msg"] for t in record["turns"]]
    assert dialogue.turns[0].source_urls == ["https://kb.example/1"]
    assert dialogue.gold_new_goal_labels() == [True, False, True]  # from "yes"/"no"


@pytest.mark.parametrize("name", ["many.json", "many.json.gz"])
def test_mtg_json_list(tmp_path: Path, name: str) -> None:
    records = [mtg_record(f"d-{i}") for i in range(3)]
    dialogues, errors = load(write_json(tmp_path / name, records))
    assert errors == []
    assert [d.model_dump(by_alias=True) for d in dialogues] == [
        Dialogue.model_validate(r).model_dump(by_alias=True) for r in records
    ]


@pytest.mark.parametrize("name", ["many.jsonl", "many.jsonl.gz"])
def test_mtg_jsonl_round_trip(tmp_path: Path, name: str) -> None:
    originals = [Dialogue.model_validate(mtg_record(f"d-{i}", n_turns=i + 1)) for i in range(4)]
    lines = [d.model_dump_json() for d in originals]
    lines.insert(2, "")  # blank lines are skipped, not errors
    dialogues, errors = load(write_jsonl(tmp_path / name, lines))
    assert errors == []
    assert dialogues == originals


def test_mtg_dialogues_without_gold_labels(tmp_path: Path) -> None:
    record = mtg_record("plain")
    for turn in record["turns"]:
        del turn["is_new_goal"]
    [dialogue], _ = load(write_json(tmp_path / "plain.json", record))
    assert dialogue.gold_new_goal_labels() is None


def _five_lines_with_a_bad_third(third: str) -> list[str]:
    lines = [json.dumps(mtg_record(f"d-{i}", n_turns=3)) for i in range(1, 6)]
    lines[2] = third
    return lines


def _missing_user_msg() -> str:
    record = mtg_record("d-3", n_turns=3)
    del record["turns"][1]["user_msg"]
    return json.dumps(record)


def _turns_out_of_order() -> str:
    record = mtg_record("d-3", n_turns=3)
    record["turns"][1]["turn_number"], record["turns"][2]["turn_number"] = 3, 2
    return json.dumps(record)


@pytest.mark.parametrize(
    ("third", "field", "message"),
    [
        (json.dumps(mtg_record("d-3"))[:-9], None, "invalid JSON"),
        (_missing_user_msg(), "turns.1.user_msg", "Field required"),
        (_turns_out_of_order(), "turns.1.turn_number", "must run 1..3 in order"),
    ],
    ids=["invalid-json", "missing-user-msg", "turns-out-of-order"],
)
def test_one_malformed_line_in_the_middle(
    tmp_path: Path, third: str, field: str | None, message: str
) -> None:
    path = write_jsonl(tmp_path / "five.jsonl", _five_lines_with_a_bad_third(third))
    items = list(load_dialogues(path))
    assert [type(item).__name__ for item in items] == ["Dialogue"] * 2 + ["RecordError"] + [
        "Dialogue"
    ] * 2
    dialogues, [error] = split_records(items)
    assert [d.dialogue_id for d in dialogues] == ["d-1", "d-2", "d-4", "d-5"]
    assert (error.file, error.line, error.dialogue_id, error.field) == (str(path), 3, "d-3", field)
    assert message in error.message
    assert str(error).startswith(f"{path}:3 dialogue 'd-3'")


def test_every_problem_of_a_record_is_named(tmp_path: Path) -> None:
    record = mtg_record("many-problems", n_turns=3)
    del record["turns"][0]["user_msg"]
    record["turns"][2]["quality"] = "great"
    record["colour"] = "blue"
    [error] = load(write_jsonl(tmp_path / "bad.jsonl", [json.dumps(record)]))[1]
    assert error.field == "turns.0.user_msg"
    assert "turns.2.quality" in error.message and "colour" in error.message


def test_a_record_that_is_not_an_object(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "odd.jsonl", [json.dumps(mtg_record("ok")), "[1, 2]", '"x"'])
    dialogues, errors = load(path, "mtg")
    assert len(dialogues) == 1
    assert [(e.line, e.dialogue_id) for e in errors] == [(2, None), (3, None)]
    assert all("dictionary" in e.message for e in errors)


def test_duplicate_id_is_an_error_for_the_second(tmp_path: Path) -> None:
    lines = [json.dumps(mtg_record(i)) for i in ("a", "b", "a", "c")]
    dialogues, [error] = load(write_jsonl(tmp_path / "dup.jsonl", lines))
    assert [d.dialogue_id for d in dialogues] == ["a", "b", "c"]
    assert (error.line, error.dialogue_id, error.field) == (3, "a", "dialogue_id")
    assert "line 1" in error.message


def test_json_list_errors_name_the_record_index(tmp_path: Path) -> None:
    records = [mtg_record("a"), mtg_record("b"), mtg_record("a")]
    del records[1]["turns"][0]["response"]  # optional: still fine
    records[1]["turns"][1]["source_urls"] = "not a list"
    dialogues, errors = load(write_json(tmp_path / "list.json", records))
    assert [d.dialogue_id for d in dialogues] == ["a"]
    assert [(e.line, e.dialogue_id, e.field) for e in errors] == [
        (2, "b", "turns.1.source_urls"),
        (3, "a", "dialogue_id"),
    ]


def test_json_list_with_broken_syntax_keeps_what_it_read(tmp_path: Path) -> None:
    text = json.dumps([mtg_record("a"), mtg_record("b")])
    path = tmp_path / "broken.json"
    path.write_text(text[: len(text) // 2 + 30] + ' "oops" ]', encoding="utf-8")
    dialogues, [error] = load(path, "mtg")
    assert [d.dialogue_id for d in dialogues] == ["a"]
    assert error.line == 2 and "invalid JSON" in error.message


def test_jsonl_saved_as_json_is_explained(tmp_path: Path) -> None:
    path = tmp_path / "lines.json"
    path.write_text(json.dumps(mtg_record("a")) + "\n" + json.dumps(mtg_record("b")) + "\n")
    dialogues, [error] = load(path)
    assert len(dialogues) == 1 and ".jsonl" in error.message


def test_large_json_list_streams_across_read_chunks(tmp_path: Path) -> None:
    # Multi-byte text and records much larger than one 64 KiB read chunk, gzipped.
    records = [mtg_record(f"big-{i}", n_turns=40) for i in range(60)]
    records[7]["turns"][0]["response"] = "ü€𝄞" * 30_000
    dialogues, errors = load(write_json(tmp_path / "big.json.gz", records))
    assert errors == []
    assert [d.dialogue_id for d in dialogues] == [r["dialog_id"] for r in records]
    assert dialogues[7].turns[0].response == "ü€𝄞" * 30_000


def test_truncated_gzip_keeps_what_it_read(tmp_path: Path) -> None:
    lines = [json.dumps(mtg_record(f"d-{i}", n_turns=30)) for i in range(200)]
    path = write_jsonl(tmp_path / "cut.jsonl.gz", lines)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    dialogues, errors = load(path)
    assert 0 < len(dialogues) < 200
    assert len(errors) == 1 and "corrupt or truncated" in errors[0].message


# --- usage errors raise -----------------------------------------------------------------------


def test_unreadable_or_unknown_inputs_raise_helpful_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no such file"):
        load_dialogues(tmp_path / "missing.jsonl")  # raised at the call, not when iterated
    with pytest.raises(ValueError, match="extension"):
        load_dialogues(write_jsonl(tmp_path / "notes.txt", ["{}"]))
    with pytest.raises(ValueError, match="unknown format"):
        load_dialogues(write_jsonl(tmp_path / "x.jsonl", ["{}"]), format="csv")  # type: ignore[arg-type]
    unknown = write_jsonl(tmp_path / "other.jsonl", [json.dumps({"id": 1, "messages": []})])
    with pytest.raises(DatasetFormatError, match=r"keys \['id', 'messages'\].*user_msg"):
        detect_format(unknown)
    with pytest.raises(ValueError, match="unknown dialogue format"):
        load_dialogues(unknown)
    schema = write_json(tmp_path / "schema.json", [{"service_name": "Banks_1", "slots": []}])
    with pytest.raises(ValueError, match="service schema"):
        detect_format(schema)
    empty = tmp_path / "empty.json"
    empty.write_text("")
    with pytest.raises(ValueError, match="empty file"):
        detect_format(empty)
    blank = tmp_path / "blank.jsonl"
    blank.write_text("\n \n")
    with pytest.raises(DatasetFormatError, match=r"blank.jsonl: the file is empty$"):
        detect_format(blank)
    with pytest.raises(DatasetFormatError, match=r"agent transcripts.*ProactiveEval"):
        detect_format(unknown)  # the message names every kind evaluate reads
    with pytest.raises(ValueError, match="found 'x'"):
        load_dialogues(write_jsonl(tmp_path / "text.json", ["x = 1"]), "mtg")
    folder = tmp_path / "nothing"
    folder.mkdir()
    write_json(folder / "schema.json", [])
    with pytest.raises(ValueError, match="no dialogue files"):
        load_dialogues(folder)


# --- SGD: small records written here ---------------------------------------------------------


def compact_record(dialogue_id: str = "1_00001", **overrides: Any) -> dict[str, Any]:
    """A short compact SGD record: two goals, and it ends on a user utterance."""
    record = {
        "dialogue_id": dialogue_id,
        "split": "dev",
        "services": ["Movies_2", "Events_1"],
        "labels": True,
        "source": "head",
        "goals": [["Movies_2", "FindMovies"], ["Events_1", "FindEvents"]],
        "segments": [[0, "Movies_2", "FindMovies"], [2, "Events_1", "FindEvents"]],
        "turns": [
            {"s": "U", "t": "Find me a movie.", "f": [_uframe("Movies_2", "FindMovies")]},
            {"s": "S", "t": "How about After?", "f": [{"svc": "Movies_2", "act": []}]},
            {"s": "U", "t": "Any sports events?", "f": [_uframe("Events_1", "FindEvents")]},
            {"s": "S", "t": "Angels Vs Astros?", "f": [{"svc": "Events_1", "act": []}]},
            {"s": "U", "t": "Thanks, bye.", "f": [_uframe("Events_1", "FindEvents")]},
        ],
    }
    return record | overrides


def _uframe(service: str, intent: str) -> dict[str, Any]:
    return {"svc": service, "intent": intent, "sv": {}, "req": []}


def test_sgd_compact_record(tmp_path: Path) -> None:
    [dialogue], _ = load(write_jsonl(tmp_path / "c.jsonl", [json.dumps(compact_record())]))
    assert [t.user_msg for t in dialogue.turns] == [
        "Find me a movie.",
        "Any sports events?",
        "Thanks, bye.",
    ]
    assert [t.response for t in dialogue.turns] == ["How about After?", "Angels Vs Astros?", ""]
    assert dialogue.gold_new_goal_labels() == [True, True, False]
    assert dialogue.turns[2].metadata == {
        "sgd_user_frames": [_uframe("Events_1", "FindEvents")],
        "sgd_system_frames": [],
    }
    assert dialogue.metadata["source"] == "sgd" and dialogue.metadata["split"] == "dev"
    assert dialogue.metadata["goals"] == compact_record()["goals"]


def test_sgd_compact_unlabelled_and_malformed(tmp_path: Path) -> None:
    swapped = compact_record("swapped")
    swapped["turns"][2]["s"] = "S"
    lines = [
        json.dumps(compact_record("unlabelled", labels=False)),
        json.dumps(swapped),
        json.dumps(compact_record("bad-segment", segments=[[1, "Movies_2", "FindMovies"]])),
        json.dumps(compact_record("no-text", turns=[{"s": "U", "f": []}])),
    ]
    dialogues, errors = load(write_jsonl(tmp_path / "c.jsonl", lines), "sgd")
    [unlabelled] = dialogues
    assert unlabelled.gold_new_goal_labels() is None
    assert [(e.line, e.dialogue_id, e.field) for e in errors] == [
        (2, "swapped", "turns.2.s"),
        (3, "bad-segment", "segments.0.0"),
        (4, "no-text", "turns.0.t"),
    ]


# Dialogue 32_00103 of SGD train, written by hand in the original release's format. The user
# checks a balance, makes a transfer, then checks the balance again: returning to a goal
# pursued before starts a new goal, as in the compact file's segments.
ORIGINAL_32_00103: dict[str, Any] = {
    "dialogue_id": "32_00103",
    "services": ["Banks_1"],
    "turns": [
        {"speaker": "USER", "utterance": "I want to check my savings account balance.",
         "frames": [{"service": "Banks_1",
                     "slots": [{"slot": "account_type", "start": 19, "exclusive_end": 26}],
                     "actions": [{"act": "INFORM", "slot": "account_type",
                                  "canonical_values": ["savings"], "values": ["savings"]},
                                 {"act": "INFORM_INTENT", "slot": "intent",
                                  "canonical_values": ["CheckBalance"],
                                  "values": ["CheckBalance"]}],
                     "state": {"active_intent": "CheckBalance", "requested_slots": [],
                               "slot_values": {"account_type": ["savings"]}}}]},
        {"speaker": "SYSTEM", "utterance": "Your savings account balance is $5,250.80.",
         "frames": [{"service": "Banks_1", "slots": [],
                     "actions": [{"act": "OFFER", "slot": "balance",
                                  "canonical_values": ["5250.80"], "values": ["$5,250.80"]},
                                 {"act": "OFFER", "slot": "account_type",
                                  "canonical_values": ["savings"], "values": ["savings"]}],
                     "service_call": {"method": "CheckBalance",
                                      "parameters": {"account_type": "savings"}},
                     "service_results": [{"account_type": "savings", "balance": "5250.80"}]}]},
        {"speaker": "USER",
         "utterance": "Ok. I want to make a transfer of 320 bucks. Send it to Sanuj.",
         "frames": [{"service": "Banks_1", "slots": [],
                     "actions": [{"act": "INFORM_INTENT", "slot": "intent",
                                  "canonical_values": ["TransferMoney"],
                                  "values": ["TransferMoney"]}],
                     "state": {"active_intent": "TransferMoney", "requested_slots": [],
                               "slot_values": {"account_type": ["savings"],
                                               "amount": ["320 bucks"],
                                               "recipient_account_name": ["Sanuj"]}}}]},
        {"speaker": "SYSTEM",
         "utterance": "Please confirm the following details: Transfer $320 from your savings "
                      "account to Sanuj's checking account.",
         "frames": [{"service": "Banks_1", "slots": [],
                     "actions": [{"act": "CONFIRM", "slot": "account_type",
                                  "values": ["savings"]},
                                 {"act": "CONFIRM", "slot": "amount", "values": ["$320"]},
                                 {"act": "CONFIRM", "slot": "recipient_account_name",
                                  "values": ["Sanuj"]},
                                 {"act": "CONFIRM", "slot": "recipient_account_type",
                                  "values": ["checking"]}]}]},
        {"speaker": "USER", "utterance": "Yes.",
         "frames": [{"service": "Banks_1", "slots": [],
                     "actions": [{"act": "AFFIRM", "slot": "", "values": []}],
                     "state": {"active_intent": "TransferMoney", "requested_slots": [],
                               "slot_values": {"account_type": ["savings"],
                                               "amount": ["$320", "320 bucks"],
                                               "recipient_account_name": ["Sanuj"],
                                               "recipient_account_type": ["checking"]}}}]},
        {"speaker": "SYSTEM", "utterance": "Your transfer was successful.",
         "frames": [{"service": "Banks_1", "slots": [],
                     "actions": [{"act": "NOTIFY_SUCCESS", "slot": "", "values": []}],
                     "service_call": {"method": "TransferMoney",
                                      "parameters": {"account_type": "savings", "amount": "320",
                                                     "recipient_account_name": "Sanuj",
                                                     "recipient_account_type": "checking"}},
                     "service_results": [{"account_type": "savings", "amount": "320"}]}]},
        {"speaker": "USER", "utterance": "Thank you. I'd like to check my new balance.",
         "frames": [{"service": "Banks_1", "slots": [],
                     "actions": [{"act": "INFORM_INTENT", "slot": "intent",
                                  "values": ["CheckBalance"]}],
                     "state": {"active_intent": "CheckBalance", "requested_slots": [],
                               "slot_values": {"account_type": ["savings"],
                                               "amount": ["$320", "320 bucks"],
                                               "recipient_account_name": ["Sanuj"],
                                               "recipient_account_type": ["checking"]}}}]},
        {"speaker": "SYSTEM", "utterance": "Your savings account balance is now $4,930.80.",
         "frames": [{"service": "Banks_1", "slots": [],
                     "actions": [{"act": "OFFER", "slot": "balance", "values": ["$4,930.80"]},
                                 {"act": "OFFER", "slot": "account_type",
                                  "values": ["savings"]}],
                     "service_call": {"method": "CheckBalance",
                                      "parameters": {"account_type": "savings"}},
                     "service_results": [{"account_type": "savings", "balance": "4930.80"}]}]},
        {"speaker": "USER", "utterance": "Ok. Thanks for your help.",
         "frames": [{"service": "Banks_1", "slots": [],
                     "actions": [{"act": "THANK_YOU", "slot": "", "values": []}],
                     "state": {"active_intent": "CheckBalance", "requested_slots": [],
                               "slot_values": {"account_type": ["savings"],
                                               "amount": ["$320", "320 bucks"],
                                               "recipient_account_name": ["Sanuj"],
                                               "recipient_account_type": ["checking"]}}}]},
        {"speaker": "SYSTEM", "utterance": "Have a great day.",
         "frames": [{"service": "Banks_1", "slots": [],
                     "actions": [{"act": "GOODBYE", "slot": "", "values": []}]}]},
    ],
}  # fmt: skip


def test_sgd_original_gold_and_compact_frames(tmp_path: Path) -> None:
    folder = tmp_path / "train"
    folder.mkdir()
    path = write_json(folder / "dialogues_001.json", [ORIGINAL_32_00103])
    assert detect_format(path) == "sgd"
    [dialogue], errors = load(path)
    assert errors == []
    assert dialogue.gold_new_goal_labels() == [True, True, False, True, False]
    assert dialogue.metadata == {
        "source": "sgd",
        "services": ["Banks_1"],
        "goals": [["Banks_1", "CheckBalance"], ["Banks_1", "TransferMoney"]],
        "split": "train",
        "segments": [
            [0, "Banks_1", "CheckBalance"],
            [2, "Banks_1", "TransferMoney"],
            [6, "Banks_1", "CheckBalance"],
        ],
        "sgd_revision": None,
    }
    assert dialogue.turns[0].metadata == {
        "sgd_user_frames": [
            {
                "svc": "Banks_1",
                "intent": "CheckBalance",
                "sv": {"account_type": ["savings"]},
                "req": [],
            }
        ],
        "sgd_system_frames": [
            {
                "svc": "Banks_1",
                "act": [
                    ["OFFER", "balance", ["$5,250.80"]],
                    ["OFFER", "account_type", ["savings"]],
                ],
                "call": ["CheckBalance", {"account_type": "savings"}],
            }
        ],
    }


def test_sgd_original_matches_its_compact_twin(tmp_path: Path) -> None:
    train = data_dir() / "sgd" / "sgd_train.jsonl.gz"
    if not train.is_file():
        pytest.skip(f"SGD reference data not found at {train} (set TODEVAL_DATA_DIR)")
    with gzip.open(train, "rb") as stream:
        line = next(raw for raw in stream if b'"dialogue_id":"32_00103"' in raw.replace(b" ", b""))
    [compact], _ = load(write_jsonl(tmp_path / "twin.jsonl", [line.decode()]))
    [original], _ = load(write_json(tmp_path / "dialogues_001.json", [ORIGINAL_32_00103]))
    assert original.turns == compact.turns  # texts, gold labels and frames
    ignore = {"split", "sgd_revision"}  # not in the original file's records
    assert {k: v for k, v in original.metadata.items() if k not in ignore} == {
        k: v for k, v in compact.metadata.items() if k not in ignore
    }


def test_sgd_original_folder_skips_schema_and_reports_bad_records(tmp_path: Path) -> None:
    folder = tmp_path / "dev"
    folder.mkdir()
    write_json(folder / "schema.json", [{"service_name": "Banks_1", "intents": []}])
    second = copy.deepcopy(ORIGINAL_32_00103) | {"dialogue_id": "32_00104"}
    no_state = copy.deepcopy(ORIGINAL_32_00103) | {"dialogue_id": "32_00105"}
    del no_state["turns"][4]["frames"][0]["state"]
    swapped = copy.deepcopy(ORIGINAL_32_00103) | {"dialogue_id": "32_00106"}
    swapped["turns"][1]["speaker"] = "USER"
    write_json(folder / "dialogues_001.json", [ORIGINAL_32_00103, no_state])
    write_json(folder / "dialogues_002.json", [swapped, second])
    assert detect_format(folder) == "sgd"
    dialogues, errors = load(folder)
    assert [d.dialogue_id for d in dialogues] == ["32_00103", "32_00104"]
    assert {d.metadata["split"] for d in dialogues} == {"dev"}
    assert [(Path(e.file).name, e.line, e.dialogue_id, e.field) for e in errors] == [
        ("dialogues_001.json", 2, "32_00105", "turns.4.frames.0.state"),
        ("dialogues_002.json", 1, "32_00106", "turns.1.speaker"),
    ]
    with pytest.raises(ValueError, match="folder"):
        load_dialogues(folder, "mtg")


# --- auto-detection ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "record", "expected"),
    [
        ("m.json", mtg_record("a"), "mtg"),
        ("m.jsonl.gz", mtg_record("a"), "mtg"),
        ("c.jsonl", compact_record(), "sgd"),
        ("c.json", [compact_record()], "sgd"),
        ("dialogues_001.json", [ORIGINAL_32_00103], "sgd"),
        ("dialogues_001.json.gz", [ORIGINAL_32_00103], "sgd"),
    ],
)
def test_auto_detection(tmp_path: Path, name: str, record: Any, expected: str) -> None:
    path = tmp_path / name
    if ".jsonl" in name:
        write_jsonl(path, ["not json", json.dumps(record)])  # a broken first line is skipped
    else:
        write_json(path, record)
    assert detect_format(path) == expected
    dialogues = split_records(load_dialogues(path))[0]
    assert len(dialogues) == 1
    assert (dialogues[0].metadata.get("source") == "sgd") == (expected == "sgd")


def test_a_format_flag_that_contradicts_the_content_names_the_content(tmp_path: Path) -> None:
    # Forced, every record would be a field error; the user meant the other format.
    sgd = write_jsonl(tmp_path / "c.jsonl", [json.dumps(compact_record())])
    with pytest.raises(DatasetFormatError, match="looks like SGD data; drop --format mtg"):
        load(sgd, "mtg")
    mtg = write_jsonl(tmp_path / "m.jsonl", [json.dumps(mtg_record("d1"))])
    with pytest.raises(DatasetFormatError, match="Mind the Goal data; drop --format sgd"):
        load(mtg, "sgd")
    assert [d.dialogue_id for d in load(mtg, "mtg")[0]] == ["d1"]


# --- SGD compact: the real dev file ----------------------------------------------------------


@pytest.fixture(scope="module")
def sgd_dev() -> tuple[Path, list[dict[str, Any]], list[Dialogue]]:
    path = data_dir() / "sgd" / "sgd_dev.jsonl.gz"
    if not path.is_file():
        pytest.skip(f"SGD reference data not found at {path} (set TODEVAL_DATA_DIR)")
    with gzip.open(path, "rt", encoding="utf-8") as stream:
        raw = [json.loads(line) for line in stream]
    dialogues, errors = split_records(load_dialogues(path))
    assert errors == []
    return path, raw, dialogues


@pytest.mark.slow
def test_sgd_dev_loads_every_dialogue(sgd_dev: Any) -> None:
    path, raw, dialogues = sgd_dev
    assert detect_format(path) == "sgd"
    assert len(dialogues) == 2482
    assert [d.dialogue_id for d in dialogues] == [r["dialogue_id"] for r in raw]


@pytest.mark.slow
def test_sgd_dev_turn_pairing_and_gold(sgd_dev: Any) -> None:
    _, raw, dialogues = sgd_dev
    for record, dialogue in zip(raw, dialogues, strict=True):
        utterances = record["turns"]
        assert len(dialogue.turns) == (len(utterances) + 1) // 2
        first = dialogue.turns[0]
        assert (first.user_msg, first.response) == (utterances[0]["t"], utterances[1]["t"])
        assert first.metadata["sgd_user_frames"] == utterances[0]["f"]
        assert first.metadata["sgd_system_frames"] == utterances[1]["f"]
        starts = {segment[0] for segment in record["segments"]}
        gold = dialogue.gold_new_goal_labels()
        assert gold == [2 * k in starts or k == 0 for k in range(len(dialogue.turns))]
        assert dialogue.metadata["goals"] == record["goals"]
        assert dialogue.metadata["split"] == "dev"


def to_original(record: dict[str, Any]) -> dict[str, Any]:
    """Rewrite a compact record in the original release's format (what the compaction dropped
    is left empty), to check the original-format gold against the compact ``segments``."""

    def user(frame: dict[str, Any]) -> dict[str, Any]:
        state = {"active_intent": frame["intent"], "requested_slots": frame["req"],
                 "slot_values": frame["sv"]}  # fmt: skip
        return {"service": frame["svc"], "slots": [], "actions": [], "state": state}

    def system(frame: dict[str, Any]) -> dict[str, Any]:
        actions = [{"act": a, "slot": s, "values": v} for a, s, v in frame["act"]]
        out = {"service": frame["svc"], "slots": [], "actions": actions}
        if "call" in frame:
            out["service_call"] = {"method": frame["call"][0], "parameters": frame["call"][1]}
        return out

    def turns() -> Iterator[dict[str, Any]]:
        for utterance in record["turns"]:
            is_user = utterance["s"] == "U"
            frames = [user(f) if is_user else system(f) for f in utterance["f"]]
            yield {"speaker": "USER" if is_user else "SYSTEM", "utterance": utterance["t"],
                   "frames": frames}  # fmt: skip

    return {"dialogue_id": record["dialogue_id"], "services": record["services"],
            "turns": list(turns())}  # fmt: skip


@pytest.mark.slow
def test_sgd_dev_original_form_gives_the_compact_gold(tmp_path: Path, sgd_dev: Any) -> None:
    _, raw, compact = sgd_dev
    folder = tmp_path / "dev"
    folder.mkdir()
    half = len(raw) // 2
    # No indent: json.dump falls back to its slow pure-Python encoder when indenting.
    write_json(folder / "dialogues_001.json", [to_original(r) for r in raw[:half]], None)
    write_json(folder / "dialogues_002.json", [to_original(r) for r in raw[half:]], None)
    original, errors = load(folder)
    assert errors == []
    assert len(original) == len(compact)
    for ours, theirs in zip(original, compact, strict=True):
        assert ours.turns == theirs.turns, ours.dialogue_id
        assert ours.metadata["segments"] == theirs.metadata["segments"]
        assert ours.metadata["goals"] == theirs.metadata["goals"]
