"""MS-TOD's own session and QA-memory files (paper 001, Figures 12-13) read and evaluated."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from todeval.cli.main import main
from todeval.evals.datasets.ms_tod_release import load_ms_tod_individual, ms_tod_qa_units
from todeval.nodes.memory.bank import memory_bank

GOAL = {"hotel_name": "Aloft Portland", "location": "Portland", "number_of_rooms": 1}


def _turn(speaker: str, text: str, confirmation: bool = False) -> dict[str, Any]:
    return {"speaker": speaker, "utterance": text, "is_confirmation": confirmation}


SESSIONS = [
    {
        "session_id": "3",
        "domain": "Hotels",
        "intent": "ReserveHotel",
        "exist_confirmation": False,
        "content": [
            _turn("user", "Book me a room at Aloft Portland."),
            _turn("assistant", "Done, one room in Portland."),
        ],
        "task_goal": GOAL,
    },
    {
        "session_id": "5",
        "domain": "Hotels",
        "intent": "ReserveHotel",
        "content": "not a list",
        "task_goal": {},
    },
    {
        "session_id": "9",
        "domain": "Hotels",
        "intent": "ReserveHotel",
        "exist_confirmation": True,
        "content": [
            _turn("user", "Hi again, same hotel as last time please."),
            _turn("assistant", "To confirm: one room at Aloft Portland?", confirmation=True),
            _turn("user", "Yes."),
        ],
        "task_goal": GOAL,
    },
]
QA_MEMORY = {
    "3": {
        "intent_description": "The user wants to reserve a room at Aloft Portland.",
        "qa_summary": [
            {"Question": "Where is the hotel?", "Answer": "The hotel is in Portland."},
            {"Question": "Which hotel?", "Answer": "The hotel is Aloft Portland."},
        ],
    }
}


def test_sessions_split_into_memory_and_items_and_bad_ones_are_reported(tmp_path: Path) -> None:
    path = tmp_path / "individual_7.json"
    path.write_text(json.dumps(SESSIONS))
    individual, errors = load_ms_tod_individual(path)
    assert individual.individual_id == "individual_7"
    assert [s.session_id for s in individual.sessions] == ["3"]
    [item] = individual.eval
    assert item.reference_response.startswith("To confirm")
    assert [t.speaker for t in item.context] == ["user"]  # up to the confirmation
    assert item.task_goal["number_of_rooms"] == "1" and item.relevant_session_ids == ["3"]
    assert individual.sessions[0].content[1].speaker == "system"  # "assistant" read as system
    [error] = errors
    assert error.dialogue_id == "5" and error.field is not None and "content" in error.field


def test_qa_memory_units_and_an_eval_run_on_them(tmp_path: Path) -> None:
    path = tmp_path / "ind.json"
    path.write_text(json.dumps(SESSIONS))
    individual, _ = load_ms_tod_individual(path)
    units = ms_tod_qa_units("ind", QA_MEMORY, individual.sessions)
    assert [u.unit_id for u in units] == ["ind/3/q1", "ind/3/q2"]
    assert {u.intent for u in units} == {"ReserveHotel"}
    memory_file = tmp_path / "qa.json"
    memory_file.write_text(json.dumps(QA_MEMORY))
    memory_bank.cache_clear()
    try:
        code = main(
            ["memory", "eval", str(path), "--qa-memory", str(memory_file), "--out",
             str(tmp_path / "out"), "--bank-backend", "memory", "--judger", "none",
             "--checkpoints", ":memory:"]
        )  # fmt: skip
    finally:
        memory_bank.cache_clear()
    assert code == 0
    [line] = [json.loads(x) for x in (tmp_path / "out" / "items.jsonl").read_text().splitlines()]
    assert line["retrieved_unit_ids"][0].startswith("ind/3/")
    assert line["scores"]["hit_at_5"] == 1.0


def test_figure_12_integer_session_ids_load_every_item(tmp_path: Path) -> None:
    numbered = [
        {**session, "session_id": int(session["session_id"])}
        for session in SESSIONS
        if session["session_id"] != "5"
    ]
    path = tmp_path / "numbered.json"
    path.write_text(json.dumps({"individual_id": 132, "sessions": numbered}))
    individual, errors = load_ms_tod_individual(path)
    assert errors == [] and individual.individual_id == "132"
    assert [s.session_id for s in individual.sessions] == ["3"]
    [item] = individual.eval
    assert item.eval_id == "9" and item.relevant_session_ids == ["3"]
    # Figure 13's QA memory is keyed by the same ids, as JSON object keys (text).
    units = ms_tod_qa_units(individual.individual_id, QA_MEMORY, individual.sessions)
    assert {u.intent for u in units} == {"ReserveHotel"}
    assert units[0].unit_id == "132/3/q1"
