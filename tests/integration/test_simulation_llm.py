"""A real model in the live harness: SmolLM2 (llama.cpp) plays the agent, then the user.

The model is tiny, so the scores are low: what is checked is that a real model's tool calls run
against the banking database, that the conversation ends with a recorded reason, and that the
results file is valid and scored (``todeval simulate`` end to end). One task and a few steps
keep the file within CI's budget: each banking request (policy and tools, ~4,400 tokens) takes
SmolLM2 about a minute to read on a 2-core machine.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scripts.llm_server import running_llm_server, unavailable_reason
from tests.integration.llm_server import LLM_MODEL
from todeval.cli.main import main
from todeval.evals.datasets.tau2 import load_goal_shift_run
from todeval.graphs.api import Context, LLMSettings, simulate_corpus
from todeval.stores.paths import data_dir

pytestmark = pytest.mark.integration

RUN40 = data_dir() / "agentchangebench" / "simulations" / "banking_gpt-4.1_run40.json"
TASK = json.loads((data_dir() / "agentchangebench/domains/banking/tasks.json").read_text())[0]
TIMEOUT_S = 300.0
"""Per request: the first banking request reads ~4,400 tokens on one thread of a busy machine."""
ENDINGS = {"user_stop", "user_error", "agent_error", "agent_stop", "max_steps"}


@pytest.fixture(scope="module")
def wide_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server with room for the banking prompts (policy and tools: about 4,400 tokens)."""
    if reason := unavailable_reason():
        pytest.skip(reason)
    log = tmp_path_factory.mktemp("llm_wide") / "server.log"
    with running_llm_server(n_ctx=6144, log_path=log) as url:
        yield url


@pytest.fixture(autouse=True)
def _offline_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local")  # any key: the server does not check it
    monkeypatch.setenv("TODEVAL_HOME", str(tmp_path / "home"))  # an empty response cache


def _results(out: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """results.json and summary.json, after checking the goal-shift loader reads every record."""
    results = json.loads((out / "results.json").read_text())
    assert [s["task_id"] for s in results["simulations"]] == [TASK["id"]]
    run = load_goal_shift_run(out / "results.json")
    assert not [r for r in run.records if not hasattr(r, "messages")], run.records
    summary = json.loads((out / "summary.json").read_text())
    assert summary["simulation"]["counts"]["conversations"] == 1
    return results, summary


def test_a_real_model_as_the_agent_calls_the_banking_tools(
    wide_server: str, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    code = main(["simulate", "--domain", "banking", "--tasks", TASK["id"], "--out", str(out),
                 "--agent", f"openai:{LLM_MODEL}@{wide_server}", "--agent-max-tokens", "80",
                 "--fold-tool-results", "--max-steps", "2", "--llm-timeout", str(TIMEOUT_S),
                 "--checkpoints", str(tmp_path / "ckpt.sqlite")])  # fmt: skip
    assert code == 0
    results, summary = _results(out)
    [simulation] = results["simulations"]
    messages = simulation["messages"]
    calls = [c for m in messages if m["role"] == "assistant" for c in m.get("tool_calls") or []]
    tools = [m for m in messages if m["role"] == "tool"]
    assert calls, f"the model made no tool call: {messages}"
    # Every call reached the database: one tool message per call, with its id, never empty.
    assert [m["tool_call_id"] for m in tools] == [c["id"] for c in calls][: len(tools)]
    assert tools and all(m["content"] for m in tools)
    assert simulation["termination_reason"] in ENDINGS
    # Graded as AgentChangeBench grades: the action sets were checked against the calls made.
    reward = simulation["reward_info"]
    assert [c["action"]["action_id"] for c in reward["action_checks"]] == [
        a["action_id"] for a in TASK["evaluation_criteria"]["action_sets"]
    ]
    assert 0.0 <= reward["reward"] <= 1.0
    assert summary["tsr"] is not None
    assert summary["llm_usage"]["agent"]["prompt_tokens"] > 2000  # the policy and tools were sent


def test_a_real_model_as_the_user(wide_server: str, tmp_path: Path) -> None:
    context = Context(
        judges={"user_simulator": f"openai:{LLM_MODEL}@{wide_server}"},
        llm=LLMSettings(max_retries=0, timeout_s=TIMEOUT_S),
        settings={"simulation": {"agent": f"replay:{RUN40}", "max_steps": 1}},
    )
    out = tmp_path / "run"

    simulate_corpus("banking", context, out=out, task_ids=[TASK["id"]], checkpoints=":memory:")

    results, summary = _results(out)
    [simulation] = results["simulations"]
    users = [m for m in simulation["messages"] if m["role"] == "user"]
    asked = summary["llm_usage"]["user_simulator"]
    assert asked["calls"] == 1 and asked["prompt_tokens"] > 2000  # the real prompt was sent
    # The model's reply is a user message the recorded agent answered, or the conversation
    # ends saying why there is none (SmolLM2 may cut its JSON short): never an empty message.
    if users:
        assert [m["role"] for m in simulation["messages"][:3]] == ["assistant", "user", "assistant"]
        assert users[0]["content"].strip()
        assert simulation["termination_reason"] in ENDINGS - {"user_error"}
    else:
        assert simulation["termination_reason"] == "user_error"
        assert simulation["todeval"]["termination_detail"]
    assert simulation["reward_info"] is not None
