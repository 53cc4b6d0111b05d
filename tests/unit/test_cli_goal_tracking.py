"""``todeval goal-tracking`` as a user runs it: ATOD gold in, goals.jsonl and summary.json out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.unit.test_goal_tracker import SCHEMA
from todeval.cli.main import main
from todeval.nodes.goal_tracking.tracker import goal_memory

ATOD: dict[str, Any] = {
    "dialogue_id": "atod-1",
    "goal_list": [
        {"id": "g1", "domain": "Restaurants_9", "intent": "FindRestaurants"},
        {"id": "g2", "domain": "Restaurants_9", "intent": "ReserveRestaurant"},
    ],
    "turns": [
        {
            "turn_id": 1,
            "speaker": "USER",
            "utterance": "Can you find me an Italian restaurant in San Jose?",
            "goal_status_changes": [{"goal_id": "g1", "new_status": "open"}],
            "all_goals": {"g1": "open", "g2": "not_mentioned"},
        },
        {
            "turn_id": 2,
            "speaker": "SYSTEM",
            "utterance": "I found 3 restaurants. How about Sino in San Jose?",
            "goal_status_changes": [{"goal_id": "g1", "new_status": "completed"}],
            "all_goals": {"g1": "completed", "g2": "not_mentioned"},
        },
        {
            "turn_id": 3,
            "speaker": "USER",
            "utterance": "That sounds good. Please reserve a table there at 7 pm.",
            "goal_status_changes": [{"goal_id": "g2", "new_status": "open"}],
            "all_goals": {"g1": "completed", "g2": "open"},
        },
        {
            "turn_id": 4,
            "speaker": "SYSTEM",
            "utterance": "Your table has been booked.",
            "goal_status_changes": [{"goal_id": "g2", "new_status": "completed"}],
            "all_goals": {"g1": "completed", "g2": "completed"},
        },
    ],
}


@pytest.fixture(autouse=True)
def _fresh_memory() -> None:
    goal_memory.cache_clear()


def test_track_goals_scores_against_atod_gold(tmp_path: Path) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(SCHEMA))
    corpus = tmp_path / "atod.jsonl"
    broken = {"dialogue_id": "broken", "turns": [{"turn_id": 1, "speaker": "USER"}]}
    corpus.write_text(json.dumps(ATOD) + "\n" + json.dumps(broken) + "\n")
    out = tmp_path / "run"
    code = main(
        [
            "track-goals",
            str(corpus),
            "--schema",
            str(schema),
            "--vector-backend",
            "memory",
            "--checkpoints",
            ":memory:",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    (line,) = [json.loads(x) for x in (out / "goals.jsonl").read_text().splitlines()]
    assert [(g["intent"], g["status"]) for g in line["goals"]] == [
        ("FindRestaurants", "completed"),
        ("ReserveRestaurant", "completed"),
    ]
    assert line["gold"] == {"g1": "completed", "g2": "completed"}
    search, reservation = line["goals"]
    assert search["parent_id"] is None and reservation["parent_id"] == search["goal_id"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["goal_detection_f1"] == 1.0 and summary["status_accuracy"] == 1.0
    assert summary["dgcr"] == 1.0 and summary["counts"]["skipped_records"] == 1
    assert summary["skipped"][0]["dialogue_id"] == "broken"
    assert summary["memory_recall_accuracy"] is not None
    assert summary["latency_ms_p50"] is not None and len(summary["progress_curve"]) == 10
    assert "goal-tracking" in (out / "report.html").read_text()
    assert "memory recall over the state" in (out / "report.html").read_text()
    assert summary["memory_recall_state_accuracy"] is not None
    assert set(summary["memory_recall_by_aspect"]) == {"slots", "status", "history"}


def test_track_goals_skips_an_sgd_record_whose_frames_are_malformed(tmp_path: Path) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(SCHEMA))
    find = {
        "svc": "Restaurants_9",
        "intent": "FindRestaurants",
        "sv": {"cuisine": ["Italian"], "city": ["San Jose"]},
        "req": [],
    }
    offer = {"svc": "Restaurants_9", "act": [["OFFER", "restaurant_name", ["Sino"]]]}

    def dialogue(dialogue_id: str, user_frame: dict[str, Any]) -> str:
        turns = [
            {"s": "U", "t": "Find me an Italian restaurant in San Jose.", "f": [user_frame]},
            {"s": "S", "t": "How about Sino in San Jose?", "f": [offer]},
        ]
        return json.dumps({"dialogue_id": dialogue_id, "turns": turns}) + "\n"

    no_intent = {"svc": "Restaurants_9", "sv": {}}  # loads, but names no intent
    corpus = tmp_path / "sgd.jsonl"
    corpus.write_text(
        dialogue("good-1", find) + dialogue("bad", no_intent) + dialogue("good-2", find)
    )
    out = tmp_path / "run"
    code = main(
        [
            "track-goals",
            str(corpus),
            "--format",
            "sgd",
            "--schema",
            str(schema),
            "--vector-backend",
            "memory",
            "--checkpoints",
            ":memory:",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    lines = [json.loads(x) for x in (out / "goals.jsonl").read_text().splitlines()]
    assert [line["dialogue_id"] for line in lines] == ["good-1", "good-2"]
    assert all(line["gold"] == {"g1": "completed"} for line in lines)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["counts"]["dialogues"] == 2 and summary["counts"]["skipped_records"] == 1
    (skipped,) = summary["skipped"]
    assert skipped["dialogue_id"] == "bad"
    assert skipped["field"] == "turns.0.f.0.intent"  # the compact record's own path
    assert skipped["file"] == str(corpus)


def _sgd_corpus(folder: Path) -> Path:
    frame = {
        "svc": "Restaurants_9",
        "intent": "FindRestaurants",
        "sv": {"cuisine": ["Italian"], "city": ["San Jose"]},
        "req": [],
    }
    offer = {"svc": "Restaurants_9", "act": [["OFFER", "restaurant_name", ["Sino"]]]}
    turns = [
        {"s": "U", "t": "Find me an Italian restaurant in San Jose.", "f": [frame]},
        {"s": "S", "t": "How about Sino in San Jose?", "f": [offer]},
    ]
    corpus = folder / "sgd_dev.jsonl"
    corpus.write_text(json.dumps({"dialogue_id": "d1", "turns": turns}) + "\n")
    return corpus


def _track(corpus: Path, out: Path) -> dict[str, Any]:
    argv = ["goal-tracking", str(corpus), "--format", "sgd", "--vector-backend", "memory"]
    assert main([*argv, "--checkpoints", ":memory:", "--out", str(out)]) == 0
    summary: dict[str, Any] = json.loads((out / "summary.json").read_text())
    return summary


def test_the_schema_beside_sgd_data_names_the_goals(tmp_path: Path) -> None:
    corpus = _sgd_corpus(tmp_path)
    (tmp_path / "schema_dev.json").write_text(json.dumps(SCHEMA))  # as SGD ships it
    summary = _track(corpus, tmp_path / "run")
    assert summary["run"]["context"]["schema_path"] == str(tmp_path / "schema_dev.json")
    assert summary["goal_detection_f1"] == 1.0 and summary["figures_note"] is None


def test_without_a_schema_sgd_gold_gives_no_detection_figure(tmp_path: Path) -> None:
    summary = _track(_sgd_corpus(tmp_path), tmp_path / "run")
    # Schema-free goals cannot match gold named by service: n/a and why, never a false 0.000.
    assert summary["goal_detection_f1"] is None and summary["status_accuracy"] is None
    assert summary["gold_not_comparable"] == 1 and "pass --schema" in summary["figures_note"]
    assert summary["counts"]["goals"] == 1  # the tracker still ran and its goals are reported


def _track_atod(tmp_path: Path, name: str, *flags: str) -> dict[str, Any]:
    corpus = tmp_path / "atod.jsonl"
    corpus.write_text(json.dumps(ATOD) + "\n")
    out = tmp_path / name
    argv = ["track-goals", str(corpus), "--vector-backend", "memory", "--checkpoints", ":memory:"]
    assert main([*argv, "--out", str(out), *flags]) == 0
    summary: dict[str, Any] = json.loads((out / "summary.json").read_text())
    return summary


def test_tau_and_delta_are_track_goals_options(tmp_path: Path) -> None:
    strict = _track_atod(tmp_path, "strict", "--tau", "1.0", "--delta", "0.9")
    settings = strict["run"]["context"]["settings"]["goal_tracking"]
    assert settings["tau"] == 1.0 and settings["delta"] == 0.9
    goal_memory.cache_clear()
    loose = _track_atod(tmp_path, "loose", "--tau", "0.0")
    # Without a schema, goals are matched by description: at tau 0 any neighbour is the same
    # goal, so the reservation is merged into the search; at tau 1 it is a goal of its own.
    assert loose["counts"]["goals"] < strict["counts"]["goals"]
    assert main(["track-goals", "x.jsonl", "--out", str(tmp_path / "bad"), "--tau", "1.5"]) == 2
