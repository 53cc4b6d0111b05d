"""The agent adapter and the task user against a real model (SmolLM2-135M behind llama.cpp).

The model is tiny: what is checked is the plumbing. The chat-model agent binds the environment's
tools with ``tool_choice="auto"``, the server answers with a tool call, and the turn parses into
a :class:`~nodes.simulation.agents.base.AgentTurn`; the next turn, after the tool result (folded
into a user message: the server's chat template drops tool messages), parses too. The LLM task
user renders AgentChangeBench's guidelines, the domain's user policy and the task's scenario and
its grammar-constrained answer is a reply with a goal on the task's sequence (a retail task: the
banking user policy does not fit the session server's 2048-token context).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import todeval.nodes.judges.llm as llm_module
from tests.integration.llm_server import LLM_MODEL
from tests.unit.test_agents import TOOLS
from todeval.nodes.judges.accounting import ACCOUNTING
from todeval.nodes.simulation.agents import AgentRequest, agent_for
from todeval.nodes.simulation.users.simulator import task_user_reply
from todeval.nodes.simulation.users.task import TaskScenario
from todeval.stores.llm_cache import LLMCache
from todeval.stores.paths import data_dir

pytestmark = pytest.mark.integration

ACB = data_dir() / "agentchangebench"
POLICY = "You are a bank's customer service agent. Look customers up with the tools."


@pytest.fixture(autouse=True)
def _fresh_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    cache = LLMCache(tmp_path / "llm_cache.sqlite")
    monkeypatch.setattr(llm_module, "default_llm_cache", lambda: cache)  # a real request each run


def test_the_chat_model_agent_calls_a_tool_and_its_turns_parse(llm_server_url: str) -> None:
    agent = agent_for(
        f"openai:{LLM_MODEL}@{llm_server_url}",
        policy=POLICY,
        max_output_tokens=60,
        fold_tool_results=True,
    )
    messages: list[dict[str, Any]] = [
        {"role": "assistant", "content": "Hi! How can I help you today?"},
        {"role": "user", "content": "Look up the customer with phone number +15551234567."},
    ]
    turn = agent.respond(AgentRequest(messages, TOOLS, "t1", 0))
    assert turn.error is None, turn.error
    assert turn.tool_calls and turn.tool_calls[0].name == "get_customer_by_phone"
    assert isinstance(turn.tool_calls[0].arguments, dict)

    call = turn.tool_calls[0]
    messages += [
        {"role": "assistant", "content": None, "tool_calls": [call.model_dump()]},
        {"role": "tool", "id": call.id, "content": json.dumps({"customer_id": "cust_101"})},
    ]
    # The server takes the folded conversation (no HTTP 500 for the tool-only turn). SmolLM2
    # often answers it with an empty message, which the adapter reports as tau2 does (an
    # agent error: neither text nor tool calls); whatever it says must parse.
    after = agent.respond(AgentRequest(messages, TOOLS, "t1", 0))
    assert after.error is None or after.error.endswith("neither text nor tool calls"), after.error
    assert after.error is not None or after.content or after.tool_calls


def test_the_llm_task_user_replies_on_its_goal_sequence(llm_server_url: str) -> None:
    tasks = json.loads((ACB / "domains" / "retail" / "tasks.json").read_text())
    task = next(t for t in tasks if t["user_scenario"]["goal_shifts"]["goals"])
    scenario = TaskScenario.from_task(task)
    ACCOUNTING.reset()
    reply = task_user_reply(
        f"openai:{LLM_MODEL}@{llm_server_url}",
        task=scenario,
        messages=[{"role": "assistant", "content": "Hi! How can I help you today?"}],
        max_retries=1,
    )
    assert reply.ok, reply.reason
    assert reply.goal_index is not None and 0 <= reply.goal_index < len(scenario.goals)
    assert reply.goal == scenario.goals[reply.goal_index]
    usage = ACCOUNTING.snapshot()["user_simulator"]
    assert usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0


def test_a_banking_user_prompt_too_long_for_the_server_is_null_with_the_reason(
    llm_server_url: str,
) -> None:
    """The banking user policy alone is ~2,300 tokens: the session server's n_ctx of 2048 is
    too small (an LLM user on banking needs ``running_llm_server(n_ctx=4096)``). The reply is
    empty with the reason, never a truncated prompt."""
    tasks = json.loads((ACB / "domains" / "banking" / "tasks.json").read_text())
    reply = task_user_reply(
        f"openai:{LLM_MODEL}@{llm_server_url}",
        task=tasks[0],
        messages=[{"role": "assistant", "content": "Hi! How can I help you today?"}],
        max_retries=0,
    )
    assert not reply.ok and "context window" in (reply.reason or "")
