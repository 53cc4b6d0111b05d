"""Proactivity Effectiveness (ATOD §6.2): proactive actions found, judged locally and by an LLM."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.fakes import ScriptedChatModel
from tests.teachers import no_backoff
from tests.unit.test_cli_goal_tracking import ATOD
from tests.unit.test_goal_tracker import SCHEMA
from todeval.cli.main import main
from todeval.evals.metrics.goal_tracking.proactive_actions import ProactiveAction, proactive_actions
from todeval.nodes.goal_tracking.roles import PROACTIVITY
from todeval.nodes.goal_tracking.tracker import goal_memory
from todeval.nodes.judges import llm as llm_module
from todeval.nodes.prompts.goal_tracking import PROACTIVITY_PROMPT
from todeval.stores.llm_cache import LLMCache

UTTERANCES = [
    {"speaker": "USER", "text": "Book me a ride to the airport."},  # 1
    {"speaker": "SYSTEM", "text": "Requesting it, I'll confirm once the driver accepts."},  # 2
    {"speaker": "USER", "text": "Meanwhile, find me a hotel in Paris."},  # 3
    {"speaker": "SYSTEM", "text": "Hotel Lumiere has rooms. Also, your ride is confirmed."},  # 4
    {"speaker": "USER", "text": "Great, book the hotel."},  # 5
    {"speaker": "SYSTEM", "text": "Booked. Shall I also reserve dinner nearby?"},  # 6
    {"speaker": "USER", "text": "No, not now."},  # 7
]


def _goal(goal_id: str, status: str, *history: tuple[int, str]) -> dict[str, Any]:
    return {"id": goal_id, "description": goal_id, "domain": "", "intent": "", "status": status,
            "status_history": [{"turn": t, "status": s} for t, s in history]}  # fmt: skip


GOALS = [
    _goal("ride", "completed", (1, "open"), (2, "pending"), (4, "completed")),
    _goal("hotel", "completed", (3, "open"), (4, "open"), (6, "completed")),
    _goal("dinner", "abandoned", (6, "open"), (7, "abandoned")),
]


def test_changes_the_user_did_not_ask_for_are_the_proactive_actions() -> None:
    actions = proactive_actions(GOALS, UTTERANCES)
    assert [(a.turn, a.goal_id, a.kind) for a in actions] == [
        (4, "ride", "update"),  # the user was asking about the hotel: an asynchronous update
        (6, "dinner", "suggestion"),  # a goal the system raised itself
    ]
    ride, dinner = actions
    assert ride.reaction == "Great, book the hotel." and ride.final_status == "completed"
    assert dinner.reaction == "No, not now." and "USER: Great, book the hotel." in dinner.context
    # the pending step at 2 answers the request at 1; the hotel at 6 answers "book the hotel"


def test_a_confirmation_keeps_the_last_goal_in_focus() -> None:
    utterances = [
        {"speaker": "USER", "text": "Reserve Sino at 7."},
        {"speaker": "SYSTEM", "text": "Please confirm: Sino at 7 pm?"},
        {"speaker": "USER", "text": "Yes, please."},
        {"speaker": "SYSTEM", "text": "Your table is booked."},
    ]
    goals = [_goal("table", "completed", (1, "open"), (4, "completed"))]
    assert proactive_actions(goals, utterances) == []
    retrieved_elsewhere = [{"turn": 3, "retrieved": "other"}]  # "yes" was about another goal
    assert [a.goal_id for a in proactive_actions(goals, utterances, retrieved_elsewhere)] == [
        "table"
    ]


def test_the_local_judge_reads_the_reaction_and_the_outcome() -> None:
    judge = PROACTIVITY.judge("local")
    ride, dinner = proactive_actions(GOALS, UTTERANCES)
    assert judge.judge(ride).value is True
    pushed_back = judge.judge(dinner)
    assert pushed_back.value is False and "pushed it back" in (pushed_back.reason or "")
    ended = ProactiveAction(9, "g", "g", "update", "pending", "pending", "Still waiting.", "", None)
    assert judge.judge(ended).value is None  # no reaction, nothing settled: no verdict
    lost = ProactiveAction(9, "g", "g", "update", "open", "failed", "Try again?", "", "Sure")
    assert judge.judge(lost).value is False


def test_the_llm_judge_needs_both_appropriate_and_beneficial(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(llm_module, "default_llm_cache", lambda: LLMCache(tmp_path / "c.sqlite"))
    monkeypatch.setattr(llm_module.LLMJudge, "__init__", no_backoff(llm_module.LLMJudge.__init__))
    model = ScriptedChatModel(
        [
            '<think>timely</think>{"appropriate": true, "beneficial": true, "reason": "useful"}',
            '{"appropriate": true, "beneficial": false, "reason": "a digression"}',
            "I cannot tell",
            "still not JSON",
        ]
    )
    judge = PROACTIVITY.llm_judge("openai:proactivity-test", max_retries=1, chat_model=model)
    ride, dinner = proactive_actions(GOALS, UTTERANCES)
    assert judge.judge(ride).value is True
    assert judge.judge(dinner).value is False
    failed = judge.judge(ProactiveAction(**{**ride.__dict__, "utterance": "Any news?"}))
    assert failed.value is None and failed.reason
    sent = str(model.calls[0][-1].content)
    assert sent.startswith(PROACTIVITY_PROMPT.split("{")[0]) and "your ride is confirmed" in sent


def test_track_goals_reports_proactivity_effectiveness(tmp_path: Path) -> None:
    goal_memory.cache_clear()
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(SCHEMA))
    corpus = tmp_path / "atod.jsonl"
    corpus.write_text(json.dumps(ATOD) + "\n")
    out = tmp_path / "run"
    flags = ["--vector-backend", "memory", "--checkpoints", ":memory:", "--out", str(out)]
    assert main(["track-goals", str(corpus), "--schema", str(schema), *flags]) == 0
    summary = json.loads((out / "summary.json").read_text())
    figure = summary["proactivity_effectiveness"]
    # The system only answers the user here: no proactive action, so no figure, and it says why.
    assert figure["n_actions"] == 0 and figure["value"] is None
    assert figure["reason"] == "no proactive action to judge"
    assert summary["judges"]["proactivity"] == "local"
    (line,) = [json.loads(x) for x in (out / "goals.jsonl").read_text().splitlines()]
    assert line["proactive_actions"] == []
