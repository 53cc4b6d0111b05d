"""``todeval simulate`` killed with SIGKILL mid-conversation resumes it on the next run.

A real process is killed (no ``finally`` runs, no checkpoint is flushed on the way out) while
an agent that takes a moment per turn is talking to the local user; the same command run again
finishes the conversation from its last checkpoint, and the transcript is the one an
uninterrupted run gives.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from todeval.cli.main import main
from todeval.nodes.simulation.agents import AgentTurn
from todeval.nodes.simulation.environments.base import ToolCall
from todeval.stores.paths import data_dir

REPO_ROOT = Path(__file__).resolve().parents[2]
TASK = json.loads((data_dir() / "agentchangebench/domains/banking/tasks.json").read_text())[0]
SLOW = "TODEVAL_TEST_SLOW_AGENT_S"
"""Seconds the agent takes per turn (set in the killed process only)."""
STEPS = 6
KILL_AFTER = 4
"""Checkpoints of the conversation's thread before the kill: past its start, before its end."""


def slow_agent(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AgentTurn:
    """Looks up accounts by turn, deterministic in the conversation; slow when told to be."""
    time.sleep(float(os.environ.get(SLOW, "0")))
    turn = sum(1 for m in messages if m.get("role") == "assistant")
    if messages[-1].get("role") == "tool":
        return AgentTurn(content=f"I checked that (turn {turn}). What else can I do?")
    call = ToolCall(id=f"c{turn}", name="get_customer_by_phone",
                    arguments={"phone_number": "+15551234567"})  # fmt: skip
    return AgentTurn(content="", tool_calls=[call])


def _args(out: Path, checkpoints: str) -> list[str]:
    return ["simulate", "--domain", "banking", "--tasks", TASK["id"], "--max-steps", str(STEPS),
            "--agent", "python:tests.unit.test_simulation_kill:slow_agent",
            "--out", str(out), "--checkpoints", checkpoints]  # fmt: skip


def _checkpoints(path: Path) -> int:
    try:
        with sqlite3.connect(path) as db:
            return int(db.execute("select count(*) from checkpoints").fetchone()[0])
    except sqlite3.Error:  # not created yet
        return 0


def _messages(out: Path) -> list[dict[str, Any]]:
    [simulation] = json.loads((out / "results.json").read_text())["simulations"]
    messages: list[dict[str, Any]] = simulation["messages"]
    return messages


def test_a_simulation_killed_mid_conversation_resumes_to_the_same_transcript(
    tmp_path: Path,
) -> None:
    assert main(_args(tmp_path / "whole", ":memory:")) == 0
    whole = _messages(tmp_path / "whole")
    assert len(whole) > KILL_AFTER + 2  # long enough to be killed in the middle

    store, out = tmp_path / "ckpt.sqlite", tmp_path / "killed"
    code = "import sys; from cli.main import main; sys.exit(main(sys.argv[1:]))"
    process = subprocess.Popen(
        [sys.executable, "-c", code, *_args(out, str(store))],
        cwd=REPO_ROOT,
        env={**os.environ, SLOW: "0.5", "TODEVAL_HOME": str(tmp_path / "home")},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while _checkpoints(store) < KILL_AFTER and process.poll() is None:
        assert time.monotonic() < deadline, "the simulation never checkpointed"
        time.sleep(0.05)
    assert process.poll() is None, f"finished before {KILL_AFTER} checkpoints: one per message?"
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL  # killed, not finished
    assert not (out / "results.json").exists()
    kept = _checkpoints(store)

    assert main(_args(out, str(store))) == 0  # the same command again

    assert _messages(out) == whole
    assert _checkpoints(store) > kept  # continued on the same thread, not restarted elsewhere
