"""The simulator audit: facts the task does not give, early stops, skipped goal shifts."""

from __future__ import annotations

import json
from typing import Any

import pytest

from todeval.evals.metrics.simulation.simulator_audit import audit_run, audit_simulator
from todeval.evals.task_facts import contradictions
from todeval.stores.paths import data_dir

TASK = {
    "id": "t1",
    "user_scenario": {
        "instructions": {"known_info": "You are Casey Williams, date of birth 1982-03-09."},
        "goal_shifts": {"required_shifts": 2, "goals": ["dispute", "account_info", "cards"]},
    },
}


def simulation(*user_lines: str, **extra: Any) -> dict[str, Any]:
    messages = [{"role": "assistant", "content": "Hi! How can I help?"}]
    for line in user_lines:
        messages += [{"role": "user", "content": line}, {"role": "assistant", "content": "Sure."}]
    return {
        "id": "c",
        "task_id": "t1",
        "termination_reason": "user_stop",
        "messages": messages,
    } | extra


def flags(audit: dict[str, Any]) -> list[str]:
    return [flag["flag"] for flag in audit["flags"]]


def test_a_date_in_other_words_is_the_same_fact() -> None:
    known = "date of birth 1982-03-09"
    assert not contradictions(known, "my date of birth is March 9, 1982")
    assert not contradictions(known, "my date of birth is 03/09/1982")
    [wrong] = contradictions(known, "my date of birth is March 10, 1982")
    assert wrong.kind == "date_of_birth"


def test_invented_facts_are_flagged_on_every_conversation() -> None:
    honest = audit_simulator(TASK, simulation("I'm Casey Williams, born on March 9, 1982."))
    assert flags(honest) == [] and not honest["goals_audited"]  # no notes, no stored judge
    invented = audit_simulator(TASK, simulation("Hi, this is Jordan Smith."))
    assert flags(invented) == ["invented_fact"]
    assert invented["flags"][0]["message_index"] == 1


def _notes(*goal_indices: int) -> dict[str, Any]:
    notes = [
        {"goal_index": g, "shifted": i > 0, "message_index": 2 * i + 1}
        for i, g in enumerate(goal_indices)
    ]
    return {"todeval": {"user_notes": notes}}


def test_early_stops_and_skipped_shifts_from_the_local_users_notes() -> None:
    full = audit_simulator(TASK, simulation("a", "b", "c", **_notes(0, 1, 2)))
    assert flags(full) == [] and full["goals_audited"]
    early = audit_simulator(TASK, simulation("a", "b", **_notes(0, 1)))
    assert flags(early) == ["stopped_early", "skipped_shift"]
    assert early["flags"][0]["evidence"] == "stopped on goal 2 of 3"


def test_recorded_runs_are_audited_from_the_stored_shift_judgement() -> None:
    stored = {"reward_info": {"info": {"gsrt_v2": {"user_goal_shifts": [{"turn": 5}]}}}}
    audit = audit_simulator(TASK, simulation("a", "b", **stored))
    assert flags(audit) == ["stopped_early", "skipped_shift"]
    assert audit["flags"][1]["evidence"] == "announced 1 of 2 goal shifts"


def test_a_conversation_the_agent_ended_is_not_the_users_to_finish() -> None:
    handed = simulation("a", **_notes(0))
    handed["messages"].append(
        {"role": "assistant", "content": None, "tool_calls": [{"name": "transfer_to_human_agents"}]}
    )
    assert flags(audit_simulator(TASK, handed)) == []
    steps = simulation("a", **_notes(0)) | {"termination_reason": "max_steps"}
    assert flags(audit_simulator(TASK, steps)) == []


RUN40 = data_dir() / "agentchangebench" / "simulations" / "banking_gpt-4.1_run40.json"


@pytest.mark.skipif(not RUN40.exists(), reason="AgentChangeBench data not found")
def test_the_recorded_gpt41_users() -> None:
    run = json.loads(RUN40.read_text())
    audit = audit_run(run["tasks"], run["simulations"])
    assert audit["conversations"] == 40 and audit["goals_audited"] == 30
    # No invented facts once dates are compared as dates; two users stop a goal short.
    assert audit["counts"] == {"skipped_shift": 2, "stopped_early": 2}
