"""The MS-TOD-style bench from SGD: split, re-entry sentence, gold, determinism, loader, CLI."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

from todeval.cli.common import UsageError
from todeval.cli.memory import add_build_bench_parser
from todeval.evals.datasets.errors import DatasetFormatError
from todeval.evals.datasets.ms_tod import build_memory_bench, dump_memory_bench, load_memory_bench
from todeval.evals.memory_schema import eval_records
from todeval.evals.memory_words import intent_in_words, is_number_or_boolean
from todeval.stores.paths import data_dir

# (service, intent, [(first user state, second user state, CONFIRM values)] x 3): the second
# user utterance is the one before the CONFIRM, so its state is the stored task goal.
Slots = dict[str, str]
INTENTS: list[tuple[str, str, list[tuple[Slots, Slots, Slots]]]] = [
    (
        "Restaurants_2",
        "ReserveRestaurant",
        [
            # Same restaurant as the next session: the re-entry must name the city instead.
            (
                {"number_of_seats": "2"},
                {"restaurant_name": "Sino", "location": "San Jose"},
                {
                    "restaurant_name": "Sino",
                    "location": "San Jose",
                    "number_of_seats": "2",
                    "date": "today",
                },
            ),
            (
                {"number_of_seats": "4"},
                {"restaurant_name": "Sino", "location": "Gilroy"},
                {
                    "restaurant_name": "Sino",
                    "location": "Gilroy",
                    "number_of_seats": "4",
                    "date": "today",
                },
            ),
            (
                {"number_of_seats": "3"},
                {"restaurant_name": "Lalla Grill", "location": "SF"},
                {
                    "restaurant_name": "Lalla Grill",
                    "location": "San Francisco",
                    "number_of_seats": "3",
                    "date": "tomorrow",
                },
            ),
        ],
    ),
    (
        "Buses_1",
        "BuyBusTicket",  # no name slot: the re-entry names a place
        [
            (
                {"travelers": "1"},
                {"from_location": "Fresno", "to_location": "LA"},
                {"from_location": "Fresno", "to_location": "Los Angeles", "travelers": "1"},
            ),
            (
                {"travelers": "2"},
                {"from_location": "Reno", "to_location": "Sacramento"},
                {"from_location": "Reno", "to_location": "Sacramento", "travelers": "2"},
            ),
            (
                {"travelers": "3"},
                {"from_location": "Portland", "to_location": "Seattle"},
                {"from_location": "Portland", "to_location": "Seattle", "travelers": "3"},
            ),
        ],
    ),
]
for service, intent, slot in [
    ("Events_1", "BuyEventTickets", "event_name"),
    ("Music_1", "PlaySong", "song_name"),
    ("Banks_2", "TransferMoney", "recipient_name"),
    ("Media_2", "RentMovie", "title"),
    ("Services_4", "BookAppointment", "therapist_name"),
]:
    INTENTS.append(
        (
            service,
            intent,
            [
                (
                    {"count": str(k + 1)},
                    {slot: f"{intent} Name {k}"},
                    {slot: f"{intent} Name {k}", "count": str(k + 1)},
                )
                for k in range(3)
            ],
        )
    )


def _utterance(speaker: str, text: str, frame: dict[str, Any]) -> dict[str, Any]:
    return {"s": speaker, "t": text, "f": [frame]}


def _dialogue(
    dialogue_id: str, service: str, intent: str, first: Slots, second: Slots, confirm: Slots
) -> dict[str, Any]:
    state1 = {slot: [value] for slot, value in first.items()}
    state2 = {**state1, **{slot: [value] for slot, value in second.items()}}
    # SGD lists the confirmed form as an equivalent value once the system has said it.
    state3 = {
        slot: sorted({*values, confirm.get(slot, values[0])}) for slot, values in state2.items()
    }
    said = ", ".join(second.values())
    confirm_text = "Please confirm: " + ", ".join(confirm.values()) + "."
    return {
        "dialogue_id": dialogue_id,
        "split": "dev",
        "services": [service],
        "turns": [
            _utterance(
                "U",
                f"I want to {intent_in_words(intent)}.",
                {"svc": service, "intent": intent, "sv": state1, "req": []},
            ),
            _utterance("S", "Sure, which one?", {"svc": service, "act": [["REQUEST", "x", []]]}),
            _utterance(
                "U", f"It is {said}.", {"svc": service, "intent": intent, "sv": state2, "req": []}
            ),
            _utterance(
                "S",
                confirm_text,
                {
                    "svc": service,
                    "act": [["CONFIRM", slot, [value]] for slot, value in confirm.items()],
                },
            ),
            _utterance("U", "Yes.", {"svc": service, "intent": intent, "sv": state3, "req": []}),
            _utterance("S", "Done.", {"svc": service, "act": [["NOTIFY_SUCCESS", "", []]]}),
        ],
    }


def _write_sgd(folder: Path) -> Path:
    records = []
    for service, intent, sessions in INTENTS:
        for k, (first, second, confirm) in enumerate(sessions):
            records.append(_dialogue(f"{intent}_{k}", service, intent, first, second, confirm))
    # Skipped: the system confirms at once (nothing to store before the user's utterance) ...
    early = _dialogue("early_0", "Restaurants_2", "ReserveRestaurant", {}, {}, {"time": "6 pm"})
    early["turns"] = early["turns"][2:]
    # ... and a goal with neither a name nor a place to re-enter with.
    counts = _dialogue(
        "counts_0",
        "Restaurants_2",
        "ReserveRestaurant",
        {"number_of_seats": "2"},
        {"time": "6 pm"},
        {"number_of_seats": "2", "time": "6 pm"},
    )
    path = folder / "sgd_dev.jsonl"
    lines = [json.dumps(r) for r in [*records, early, counts]] + ['{"dialogue_id": "broken"}']
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def sgd(tmp_path: Path) -> Path:
    return _write_sgd(tmp_path)


def test_each_confirmed_dialogue_becomes_a_session_and_an_eval_item(sgd: Path) -> None:
    errors: list[Any] = []
    bench = build_memory_bench(sgd, "dev", seed=0, errors=errors)
    assert [e.dialogue_id for e in errors] == ["broken"]
    (individual,) = bench.individuals
    assert len(individual.sessions) == len(individual.eval) == 21
    assert len({s.intent for s in individual.sessions}) == 7
    by_source = {(s.model_extra or {})["reference_dialogue_id"]: s for s in individual.sessions}
    assert "early_0" not in by_source and "counts_0" not in by_source

    session = by_source["ReserveRestaurant_2"]
    # Stored: the utterances before the user's utterance preceding the CONFIRM.
    assert [t.utterance for t in session.content] == [
        "I want to reserve restaurant.",
        "Sure, which one?",
    ]
    # Its task goal: the user state there, a confirmed slot in its confirmed form ("SF").
    assert session.task_goal == {
        "number_of_seats": "3",
        "restaurant_name": "Lalla Grill",
        "location": "San Francisco",
    }
    item = next(e for e in individual.eval if e.relevant_session_ids == [session.session_id])
    assert item.context[0].speaker == "user"
    assert item.context[0].utterance == (
        "Hi again, it's about the reserve restaurant for Lalla Grill. It is Lalla Grill, SF."
    )
    assert item.task_goal["location"] == "San Francisco" and item.task_goal["date"] == "tomorrow"
    assert item.reference_response.startswith("Please confirm: Lalla Grill")
    assert (
        item.intent == "ReserveRestaurant" and (item.model_extra or {})["domain"] == "Restaurants_2"
    )


def test_the_reentry_value_is_a_name_else_a_place_and_tells_siblings_apart(sgd: Path) -> None:
    (individual,) = build_memory_bench(sgd, "dev", seed=3).individuals
    sessions = {s.session_id: s for s in individual.sessions}
    opening = {
        (sessions[e.relevant_session_ids[0]].model_extra or {})["reference_dialogue_id"]: e.context[
            0
        ].utterance.split(". ")[0]
        for e in individual.eval
    }
    # Two sessions at the same restaurant: each names its own city.
    assert opening["ReserveRestaurant_0"].endswith("for San Jose")
    assert opening["ReserveRestaurant_1"].endswith("for Gilroy")
    assert opening["BuyBusTicket_0"].endswith("for Fresno")  # no name slot: a place
    assert opening["PlaySong_1"] == "Hi again, it's about the play song for PlaySong Name 1"
    for item in individual.eval:
        value = item.context[0].utterance.split(" for ", 1)[1].split(". ")[0]
        assert not is_number_or_boolean(value)
        assert value in sessions[item.relevant_session_ids[0]].task_goal.values()


def test_same_seed_same_bytes_other_seed_other_order(sgd: Path, tmp_path: Path) -> None:
    paths = [tmp_path / f"bench{n}.json" for n in range(3)]
    for path, seed in zip(paths, (7, 7, 8), strict=True):
        dump_memory_bench(build_memory_bench(sgd, "dev", seed=seed), path)
    assert paths[0].read_bytes() == paths[1].read_bytes()
    assert paths[0].read_bytes() != paths[2].read_bytes()


def test_individuals_cap_and_missing_split(sgd: Path) -> None:
    assert build_memory_bench(sgd.parent, "dev", seed=0, individuals=0).individuals == []
    with pytest.raises(DatasetFormatError, match="train"):
        build_memory_bench(sgd.parent, "train", seed=0)


def test_loader_reports_bad_parts_by_id_and_field_and_keeps_the_rest(
    sgd: Path, tmp_path: Path
) -> None:
    bench = build_memory_bench(sgd, "dev", seed=0)
    raw = json.loads(bench.model_dump_json())
    individual = raw["individuals"][0]
    del individual["eval"][3]["context"]
    individual["sessions"][5]["task_goal"] = ["not", "a", "mapping"]
    orphan = next(
        e for e in individual["eval"] if e["relevant_session_ids"] == ["s06"]
    )  # points at the broken session
    raw["individuals"].append({**individual, "sessions": "nope"})
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(raw))

    loaded, errors = load_memory_bench(path)
    found = {(e.dialogue_id, e.field) for e in errors}
    assert (individual["eval"][3]["eval_id"], "individuals.0.eval.3.context") in found
    assert ("ind001/s06", "individuals.0.sessions.5.task_goal") in found
    orphan_at = individual["eval"].index(orphan)
    assert (orphan["eval_id"], f"individuals.0.eval.{orphan_at}.relevant_session_ids") in found
    assert ("ind001", "individuals.1.sessions") in found
    assert len(errors) == 4
    (kept,) = loaded.individuals
    assert len(kept.sessions) == 20 and len(kept.eval) == 19


def test_loader_refuses_a_file_that_is_not_a_bench(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('{"dialogues": []}')
    with pytest.raises(DatasetFormatError, match="individuals"):
        load_memory_bench(path)


def _cli(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_build_bench_parser(parser.add_subparsers())
    return parser.parse_args(argv)


def test_build_bench_command_writes_the_file_and_prints_counts(
    sgd: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out" / "bench.json"
    args = _cli(["build-bench", "--sgd", str(sgd.parent), "--split", "dev", "--out", str(out)])
    assert args.run(args) == 0
    printed = capsys.readouterr()
    assert "1 individuals, 21 sessions, 21 eval items" in printed.out
    assert "broken" in printed.err  # the unreadable SGD record is named
    loaded, errors = load_memory_bench(out)
    assert errors == [] and len(loaded.individuals) == 1

    args = _cli(["build-bench", "--sgd", str(tmp_path / "nowhere"), "--out", str(out)])
    with pytest.raises(UsageError, match="nowhere"):
        args.run(args)


@pytest.mark.skipif(
    not (data_dir() / "sgd" / "sgd_dev.jsonl.gz").exists(), reason="SGD dev not available"
)
def test_real_sgd_dev_builds_full_individuals() -> None:
    bench = build_memory_bench(data_dir() / "sgd", "dev", seed=0, individuals=5)
    assert len(bench.individuals) == 5
    for individual in bench.individuals:
        intents = [s.intent for s in individual.sessions]
        assert len(set(intents)) == 7 and all(intents.count(i) == 3 for i in set(intents))
        sessions = {s.session_id: s for s in individual.sessions}
        for item in individual.eval:
            (relevant,) = item.relevant_session_ids
            assert sessions[relevant].intent == item.intent
            assert item.context[0].utterance.startswith("Hi again, it's about the ")
            assert item.task_goal and item.reference_response


def _numbered(raw: dict[str, Any]) -> dict[str, Any]:
    """The bench with every id a JSON number, as Figure 12 numbers sessions."""
    for i, individual in enumerate(raw["individuals"], start=1):
        numbers = {s["session_id"]: n for n, s in enumerate(individual["sessions"], start=1)}
        for session in individual["sessions"]:
            session["session_id"] = numbers[session["session_id"]]
        for n, item in enumerate(individual["eval"], start=1):
            item["eval_id"] = 1000 * i + n
            item["relevant_session_ids"] = [numbers[s] for s in item["relevant_session_ids"]]
        individual["individual_id"] = i
    return raw


def test_integer_ids_load_every_item_as_text(sgd: Path, tmp_path: Path) -> None:
    raw = _numbered(json.loads(build_memory_bench(sgd, "dev", seed=0).model_dump_json()))
    path = tmp_path / "numbered.json"
    path.write_text(json.dumps(raw))
    loaded, errors = load_memory_bench(path)
    assert errors == []
    (individual,) = loaded.individuals
    assert individual.individual_id == "1" and len(individual.eval) == 21
    sessions = {s.session_id for s in individual.sessions}
    assert sessions == {str(n) for n in range(1, 22)}
    for item in individual.eval:
        assert item.eval_id.startswith("10")
        assert set(item.relevant_session_ids) <= sessions  # 9 and "9" are the same id
    records = list(eval_records(loaded))
    assert len(records) == 21 and records[0].individual_id == "1"


def test_ids_that_are_not_integers_or_text_are_errors(sgd: Path, tmp_path: Path) -> None:
    raw = json.loads(build_memory_bench(sgd, "dev", seed=0).model_dump_json())
    individual = raw["individuals"][0]
    individual["sessions"][0]["session_id"] = True
    individual["eval"][0]["eval_id"] = 1.5
    path = tmp_path / "bad_ids.json"
    path.write_text(json.dumps(raw))
    loaded, errors = load_memory_bench(path)
    fields = {e.field for e in errors}
    assert "individuals.0.sessions.0.session_id" in fields
    assert "individuals.0.eval.0.eval_id" in fields
    assert len(loaded.individuals[0].sessions) == 20


def test_the_hard_bench_names_no_stored_value_and_keeps_everything_else(sgd: Path) -> None:
    easy = build_memory_bench(sgd, "dev", seed=3)
    hard = build_memory_bench(sgd, "dev", seed=3, hard=True)
    (easy_individual,), (hard_individual,) = easy.individuals, hard.individuals
    assert hard_individual.sessions == easy_individual.sessions
    for easy_item, hard_item in zip(easy_individual.eval, hard_individual.eval, strict=True):
        assert hard_item.model_dump(exclude={"context"}) == easy_item.model_dump(
            exclude={"context"}
        )
        reentry, utterance = hard_item.context[0].utterance.split(". ", 1)
        assert easy_item.context[0].utterance.endswith(utterance)
        assert reentry == f"Hi again, it's about the {intent_in_words(hard_item.intent)}"
        stored = next(
            s for s in hard_individual.sessions if s.session_id == hard_item.relevant_session_ids[0]
        )
        assert not any(value in reentry for value in stored.task_goal.values())
