"""The floor agents themselves (issue 29): what each returns, reached by spec.

Tool domains: ``floor:<name>`` (:mod:`nodes.simulation.agents.floor`); ProactiveEval:
:mod:`nodes.proactive.floor_agents`. Where each one's figures stand is
``tests/integration/test_floor_agents.py``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from todeval.evals.proactive_schema import Environment, TargetPlan
from todeval.nodes.proactive import floor_agents as proactive
from todeval.nodes.proactive.guidance import agent_policy
from todeval.nodes.proactive.planning import planning_prompt
from todeval.nodes.simulation.agents import AgentRequest, AgentSpecError, agent_for
from todeval.nodes.simulation.agents.floor import (
    DONE_REPLY,
    FLOOR_AGENTS,
    NO_TRANSFER_REPLY,
    TRANSFER_REPLY,
    TRANSFER_TOOL,
    FloorAgent,
)
from todeval.nodes.simulation.domains import DOMAINS

GREETING = {"role": "assistant", "content": "Hi! How can I help you today?"}
ASK = {"role": "user", "content": "Please lock my debit card, it was stolen."}
CONVERSATION = [GREETING, ASK]


def _schema(name: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    parameters = {"type": "object", "properties": properties, "required": required}
    return {"type": "function", "function": {"name": name, "parameters": parameters}}


TRANSFER = _schema(TRANSFER_TOOL, {"summary": {"type": "string"}}, ["summary"])
LOOKUP = _schema(
    "get_account",
    {
        "account_id": {"type": "string"},
        "limit": {"type": "integer"},
        "kind": {"type": "string", "enum": ["checking", "savings"]},
        "flags": {"type": "array", "items": {"type": "boolean"}},
        "note": {"type": "string"},
    },
    ["account_id", "limit", "kind", "flags"],
)


def _turn(name: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
    return agent_for(f"floor:{name}", policy="any policy").respond(
        AgentRequest(messages, tools, "t1", 0)
    )


def test_every_floor_agent_is_reached_by_its_spec() -> None:
    for name in FLOOR_AGENTS:
        agent = agent_for(f"floor:{name}", policy="p")
        assert isinstance(agent, FloorAgent)
        assert agent.name == f"floor:{name}"


def test_an_unknown_floor_agent_is_a_spec_error_naming_the_known_ones() -> None:
    with pytest.raises(AgentSpecError, match="random_tool"):
        agent_for("floor:genius", policy="p")
    with pytest.raises(AgentSpecError):
        agent_for("floor:", policy="p")


def test_empty_says_nothing_and_calls_nothing() -> None:
    turn = _turn("empty", CONVERSATION, [TRANSFER, LOOKUP])
    assert turn.error is None
    assert not turn.content
    assert turn.tool_calls == []


def test_done_claims_success_whatever_was_asked() -> None:
    for messages in (CONVERSATION, [GREETING, {"role": "user", "content": "What is 2+2?"}]):
        turn = _turn("done", messages, [TRANSFER])
        assert (turn.content, turn.tool_calls, turn.error) == (DONE_REPLY, [], None)


def test_parrot_repeats_the_users_last_message_word_for_word() -> None:
    later = [
        *CONVERSATION,
        {"role": "assistant", "content": "x"},
        {"role": "user", "content": "No."},
    ]
    assert _turn("parrot", CONVERSATION, []).content == ASK["content"]
    assert _turn("parrot", later, []).content == "No."
    assert _turn("parrot", CONVERSATION, []).tool_calls == []


def test_transfer_calls_the_transfer_tool_then_says_so() -> None:
    first = _turn("transfer", CONVERSATION, [LOOKUP, TRANSFER])
    assert first.content is None
    [call] = first.tool_calls
    assert call.name == TRANSFER_TOOL
    assert call.arguments == {"summary": ASK["content"]}
    result = {"role": "tool", "tool_call_id": call.id, "name": TRANSFER_TOOL, "content": "ok"}
    called = {"role": "assistant", "content": None, "tool_calls": [call.model_dump()]}
    after = _turn("transfer", [*CONVERSATION, called, result], [LOOKUP, TRANSFER])
    assert (after.content, after.tool_calls) == (TRANSFER_REPLY, [])


def test_transfer_without_a_transfer_tool_says_so_in_words() -> None:
    turn = _turn("transfer", CONVERSATION, [LOOKUP])
    assert (turn.content, turn.tool_calls) == (NO_TRANSFER_REPLY, [])


def test_random_tool_calls_an_offered_tool_with_arguments_of_the_schema_types() -> None:
    turn = _turn("random_tool", CONVERSATION, [LOOKUP])
    [call] = turn.tool_calls
    assert call.name == "get_account"
    arguments = call.arguments
    assert set(arguments) == {"account_id", "limit", "kind", "flags"}  # required ones only
    assert isinstance(arguments["account_id"], str) and arguments["account_id"]
    assert isinstance(arguments["limit"], int)
    assert arguments["kind"] in ("checking", "savings")
    assert len(arguments["flags"]) == 1 and isinstance(arguments["flags"][0], bool)


def test_random_tool_is_seeded_by_task_trial_and_turn() -> None:
    tools = DOMAINS["banking"].tool_schemas()
    agent = agent_for("floor:random_tool", policy="p")

    def call(task_id: str, trial: int, messages: list[dict[str, Any]]) -> Any:
        return agent.respond(AgentRequest(messages, tools, task_id, trial)).tool_calls[0]

    assert call("t1", 0, CONVERSATION) == call("t1", 0, CONVERSATION)
    others = [call(f"t{i}", trial, CONVERSATION) for i in range(8) for trial in (0, 1)]
    assert len({(c.name, json.dumps(c.arguments, sort_keys=True)) for c in others}) > 4
    offered = {tool["function"]["name"] for tool in tools}
    assert {c.name for c in others} <= offered


def test_random_tool_hands_the_turn_back_after_the_result() -> None:
    first = _turn("random_tool", CONVERSATION, [LOOKUP]).tool_calls[0]
    called = {"role": "assistant", "content": None, "tool_calls": [first.model_dump()]}
    result = {"role": "tool", "tool_call_id": first.id, "name": "get_account", "content": "{}"}
    after = _turn("random_tool", [*CONVERSATION, called, result], [LOOKUP])
    assert after.tool_calls == []
    assert after.content == "I called get_account."


ENVIRONMENT = Environment(
    user_information="Maya is a nurse who works night shifts in Leeds.",
    trigger_factor="Her sleep tracker shows four hours a night this week.",
)
REFERENCE = TargetPlan(
    target="Suggest a wind-down routine",
    sub_target=["Ask how she sleeps after shifts", "Mention the tracker", "Offer a routine"],
)
REFUSAL = [
    {"role": "assistant", "content": "Hello"},
    {"role": "user", "content": "No, not interested."},
]


def test_recite_says_every_reference_sub_target_whatever_the_user_says() -> None:
    policy = agent_policy(ENVIRONMENT, REFERENCE)
    opening = proactive.recite([], [], policy)
    assert opening == "Ask how she sleeps after shifts Mention the tracker Offer a routine"
    assert proactive.recite(REFUSAL, [], policy) == opening


def test_empty_and_one_word_guides() -> None:
    assert proactive.empty(REFUSAL, []) == ""
    assert proactive.one_word(REFUSAL, []) == proactive.ONE_WORD
    assert len(proactive.ONE_WORD.split()) == 1


def test_plan_nothing_answers_an_empty_plan() -> None:
    prompt = planning_prompt("recommendation", ENVIRONMENT)
    plan = json.loads(proactive.plan_nothing([{"role": "user", "content": prompt}], []))
    assert plan == {"Target": "", "sub-target": []}


def test_copy_environment_plans_the_environment_text() -> None:
    prompt = planning_prompt("recommendation", ENVIRONMENT)
    plan = json.loads(proactive.copy_environment([{"role": "user", "content": prompt}], []))
    assert plan["Target"] == f"{ENVIRONMENT.user_information} {ENVIRONMENT.trigger_factor}"
    assert plan["sub-target"] == [ENVIRONMENT.user_information, ENVIRONMENT.trigger_factor]


def test_the_proactive_floor_specs_name_callables_the_harness_accepts() -> None:
    policy = agent_policy(ENVIRONMENT, REFERENCE)
    for name, spec in proactive.GUIDE_FLOOR_SPECS.items():
        turn = agent_for(spec, policy=policy).respond(AgentRequest(REFUSAL, [], "e1", 0))
        if name == "empty":  # the harness reads an empty message as a failed turn
            assert turn.error is not None and "neither text nor tool calls" in turn.error
        else:
            assert turn.error is None and turn.content
    prompt = [{"role": "user", "content": planning_prompt("recommendation", ENVIRONMENT)}]
    for spec in proactive.PLAN_FLOOR_SPECS.values():
        turn = agent_for(spec, policy="p").respond(AgentRequest(prompt, [], "e1", 0))
        assert turn.error is None and json.loads(turn.content or "")
