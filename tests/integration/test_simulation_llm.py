"""A real model in the live harness: SmolLM2 (llama.cpp) plays the agent, then the user.

The model is tiny, so the scores are low: what is checked is that a real model's tool calls run
against the banking database, that the conversation ends with a recorded reason, and that the
results file is valid and scored (``todeval simulate`` end to end).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cli.main import main
from evals.datasets.tau2 import load_goal_shift_run
from scripts.llm_server import running_llm_server, unavailable_reason
from stores.paths import data_dir
from tests.integration.llm_server import LLM_MODEL

pytestmark = pytest.mark.integration

RUN40 = data_dir() / "agentchangebench" / "simulations" / "banking_gpt-4.1_run40.json"
TASKS = [t["id"] for t in json.loads(
    (data_dir() / "agentchangebench/domains/banking/tasks.json").read_text())[:1]]  # fmt: skip
"""One task: a 135M model on 2 cores reads the 4,000-token banking prompt in about a minute."""


@pytest.fixture(scope="module")
def wide_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server with room for the banking prompts (policy and tools: about 4,400 tokens)."""
    if reason := unavailable_reason():
        pytest.skip(reason)
    log = tmp_path_factory.mktemp("llm_wide") / "server.log"
    with running_llm_server(n_ctx=6144, log_path=log) as url:
        yield url


def _simulate(tmp_path: Path, *flags: str) -> dict[str, Any]:
    out = tmp_path / "run"
    args = ["simulate", "--domain", "banking", "--tasks", ",".join(TASKS), "--out", str(out),
            "--checkpoints", str(tmp_path / "ckpt.sqlite"), "--llm-timeout", "300",
            "--max-steps", "3", *flags]  # fmt: skip
    assert main(args) == 0
    results = json.loads((out / "results.json").read_text())
    assert len(results["simulations"]) == len(TASKS)
    run = load_goal_shift_run(out / "results.json")
    assert not [r for r in run.records if not hasattr(r, "messages")], run.records
    summary = json.loads((out / "summary.json").read_text())
    assert summary["simulation"]["counts"]["conversations"] == len(TASKS)
    assert summary.get("tsr") is not None
    return results


def test_a_real_model_as_the_agent_calls_the_banking_tools(
    wide_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local")
    monkeypatch.setenv("TODEVAL_HOME", str(tmp_path / "home"))
    results = _simulate(
        tmp_path, "--agent", f"openai:{LLM_MODEL}@{wide_server}", "--agent-max-tokens", "80",
        "--fold-tool-results",
    )  # fmt: skip
    messages = [m for s in results["simulations"] for m in s["messages"]]
    tools = [m for m in messages if m["role"] == "tool"]
    assert tools, "the model made no tool call"
    # A call that reached the environment got the database's answer or its error, never nothing.
    assert all(m["content"] for m in tools)
    for simulation in results["simulations"]:
        assert simulation["termination_reason"] in {
            "user_stop", "agent_error", "agent_stop", "max_steps"}  # fmt: skip
        assert simulation["reward_info"] is not None


def test_a_real_model_as_the_user(
    wide_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local")
    monkeypatch.setenv("TODEVAL_HOME", str(tmp_path / "home"))
    results = _simulate(
        tmp_path, "--agent", f"replay:{RUN40}", "--user", f"openai:{LLM_MODEL}@{wide_server}"
    )
    # The model's first reply is a user message, or the conversation says why there is none
    # (SmolLM2 often cuts its JSON short): never an empty message passed on to the agent.
    [simulation] = results["simulations"]
    users = [m for m in simulation["messages"] if m["role"] == "user"]
    assert all(m["content"].strip() for m in users)
    if not users:
        assert simulation["termination_reason"] == "user_error"
        assert simulation["todeval"]["termination_detail"]
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    asked = summary["llm_usage"]["user_simulator"]
    assert asked["calls"] >= 1 and asked["prompt_tokens"] > 2000  # the real prompt was sent
