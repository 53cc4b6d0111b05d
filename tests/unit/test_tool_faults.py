"""Injected tool faults (``--tool-faults``) and the agent's recovery from them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from todeval.cli.main import main
from todeval.evals.metrics.simulation.tool_faults import fault_outcomes, fault_recovery
from todeval.nodes.simulation.domains.airline.tools import AirlineEnvironment
from todeval.nodes.simulation.environments.base import ToolCall
from todeval.nodes.simulation.environments.faults import (
    FAULT_KINDS,
    FaultyEnvironment,
    ToolFaults,
    ToolFaultSpecError,
)

CANCEL = ToolCall(id="c1", name="cancel_reservation", arguments={"reservation_id": "4WQ150"})
READ = ToolCall(id="r1", name="get_reservation_details", arguments={"reservation_id": "4WQ150"})


def faulty(faults: ToolFaults, *, task: str = "7", trial: int = 0) -> FaultyEnvironment:
    return FaultyEnvironment(
        AirlineEnvironment(), faults, task_id=task, trial=trial, fresh=AirlineEnvironment
    )


def test_specs_parse_and_bad_ones_are_refused() -> None:
    assert ToolFaults.parse("") is None and ToolFaults.parse("none") is None
    assert ToolFaults.parse("0.2") == ToolFaults(rate=0.2, kinds=FAULT_KINDS)
    assert ToolFaults.parse("0.1:timeout, stale", seed=3) == ToolFaults(
        0.1, ("timeout", "stale"), 3
    )
    for bad in ("often", "1.5", "0.2:meteor"):
        with pytest.raises(ToolFaultSpecError):
            ToolFaults.parse(bad)


def test_draws_are_reproducible_and_near_the_rate() -> None:
    faults = ToolFaults(rate=0.25, seed=7)
    draws = [faults.kind_at("task", 0, position) for position in range(4000)]
    assert draws == [faults.kind_at("task", 0, position) for position in range(4000)]
    assert 0.22 < sum(d is not None for d in draws) / len(draws) < 0.28
    assert {d for d in draws if d} == set(FAULT_KINDS)
    other_seed = [ToolFaults(rate=0.25, seed=8).kind_at("task", 0, p) for p in range(4000)]
    assert other_seed != draws


def test_calls_that_time_out_or_fail_do_not_run() -> None:
    for kind in ("timeout", "error"):
        env = faulty(ToolFaults(rate=1.0, kinds=(kind,)))
        result = env.call(CANCEL)
        assert result.error and result.fault == kind and result.error_kind == "environment"
        assert "status" not in env.snapshot()["reservations"]["4WQ150"]


def test_empty_corrupted_and_stale_results_run_the_call() -> None:
    env = faulty(ToolFaults(rate=1.0, kinds=("empty",)))
    assert env.call(CANCEL).content == ""
    assert env.snapshot()["reservations"]["4WQ150"]["status"] == "cancelled"
    env = faulty(ToolFaults(rate=1.0, kinds=("corrupted",)))
    garbled = env.call(READ).content
    with pytest.raises(json.JSONDecodeError):
        json.loads(garbled)
    # stale: the cancellation ran, yet the read shows the reservation as the trial started
    env = faulty(ToolFaults(rate=0.0))
    env.call(CANCEL)
    env.faults = ToolFaults(rate=1.0, kinds=("stale",))
    stale = env.call(READ)
    assert stale.fault == "stale" and "cancelled" not in stale.content
    assert env.snapshot()["reservations"]["4WQ150"]["status"] == "cancelled"


def test_replay_meets_the_same_faults_as_the_run() -> None:
    faults = ToolFaults(rate=0.5, kinds=("timeout",), seed=1)
    env = faulty(faults)
    log = [CANCEL.model_copy(update={"id": f"c{i}"}) for i in range(6)]
    ran = [env.call(call) for call in log]
    assert {r.fault for r in ran} == {None, "timeout"}  # some ran, some did not
    state = json.dumps(env.snapshot()["reservations"]["4WQ150"], sort_keys=True)
    again = faulty(faults)
    again.replay(log)
    assert json.dumps(again.snapshot()["reservations"]["4WQ150"], sort_keys=True) == state


def _transcript(*after: dict[str, object], kind: str = "timeout") -> list[dict[str, object]]:
    return [
        {"role": "user", "content": "Please cancel 4WQ150."},
        {"role": "assistant", "content": None, "tool_calls": [{"name": "cancel_reservation"}]},
        {"role": "tool", "name": "cancel_reservation", "content": "Error", "fault": kind},
        *after,
    ]


def test_recovery_tells_retries_from_honesty_and_false_success() -> None:
    retry = _transcript(
        {"role": "assistant", "content": None},
        {"role": "tool", "name": "cancel_reservation", "content": "{}", "error": False},
        {"role": "assistant", "content": "Your reservation is cancelled."},
    )
    honest = _transcript({"role": "assistant", "content": "Sorry, the system had an error."})
    liar = _transcript({"role": "assistant", "content": "Done! Your reservation is cancelled."})
    silent = _transcript({"role": "user", "content": "Hello?"})
    [r], [h], [f], [s] = map(fault_outcomes, (retry, honest, liar, silent))
    assert r["retried"] and not r["false_success"]
    assert h["told_user"] and not h["retried"] and not h["false_success"]
    assert f["false_success"] and not f["told_user"]
    assert not any((s["retried"], s["told_user"], s["false_success"]))
    ran = fault_outcomes(_transcript({"role": "assistant", "content": "Done!"}, kind="empty"))
    assert not ran[0]["false_success"]  # the call ran: the claim may be true
    summary = fault_recovery({"messages": m} for m in (retry, honest, liar, silent))
    assert summary == {
        "timeout": {
            "faults": 4,
            "retried_rate": 0.25,
            "told_user_rate": 0.25,
            "recovered_rate": 0.5,
            "false_success_rate": 0.25,
        }
    }
    assert fault_recovery([{"messages": honest[:2]}]) == {}


def retrying_agent(messages: list[dict[str, object]], tools: list[object]) -> object:
    """Reads a reservation; on an error result retries once, then tells the user."""
    tool_results = [m for m in messages if m.get("role") == "tool"]
    if not tool_results or (tool_results[-1].get("error") and len(tool_results) < 2):
        read = {"reservation_id": "4WQ150"}
        call = {"id": f"r{len(tool_results)}", "name": "get_reservation_details", "arguments": read}
        return {"content": None, "tool_calls": [call]}
    if tool_results[-1].get("error"):
        return "Sorry, our reservation system had an error; please try again later."
    return "Your reservation 4WQ150 is on file. Anything else?"


def test_a_simulate_run_injects_records_and_reports_faults(tmp_path: Path) -> None:
    args = [
        "simulate", "--domain", "airline", "--tasks", "0,1,2,3", "--user", "local",
        "--agent", "python:tests.unit.test_tool_faults:retrying_agent",
        "--tool-faults", "0.5:error",
    ]  # fmt: skip
    assert main([*args, "--out", str(tmp_path / "a"), "--checkpoints", ":memory:"]) == 0
    results = json.loads((tmp_path / "a" / "results.json").read_text())
    tools = [m for s in results["simulations"] for m in s["messages"] if m["role"] == "tool"]
    faulted = [m for m in tools if m.get("fault")]
    assert faulted and all(m["fault"] == "error" and m["error"] for m in faulted)
    assert len(faulted) < len(tools)  # at rate 0.5 some calls ran
    summary = json.loads((tmp_path / "a" / "summary.json").read_text())
    recovery = summary["simulation"]["tool_faults"]["recovery"]["error"]
    assert recovery["faults"] == len(faulted)
    assert recovery["recovered_rate"] == 1.0 and recovery["false_success_rate"] == 0
    assert summary["simulation"]["attribution"]["counts"].get("environment", 0) == 0
    assert "Injected tool faults" in (tmp_path / "a" / "report.html").read_text()
    # The same seed draws the same faults: a fresh second run gives the same transcripts.
    assert main([*args, "--out", str(tmp_path / "b"), "--checkpoints", ":memory:"]) == 0
    again = json.loads((tmp_path / "b" / "results.json").read_text())
    assert [s["messages"] for s in again["simulations"]] == [
        s["messages"] for s in results["simulations"]
    ]


def test_a_bad_fault_spec_is_a_usage_error(tmp_path: Path) -> None:
    code = main(["simulate", "--domain", "airline", "--agent", "floor:empty", "--tool-faults",
                 "often", "--out", str(tmp_path)])  # fmt: skip
    assert code == 2
