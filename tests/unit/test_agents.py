"""Agent adapters: each kind with fakes, the replay of run40, and bad agent behaviour."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import START, MessagesState, StateGraph

import todeval.nodes.simulation.agents.chat_model as chat_model_module
from tests.fakes import ScriptedChatModel, tool_call_message
from todeval.nodes.judges.accounting import ACCOUNTING
from todeval.nodes.judges.limits import LIMITS, LLMPolicy
from todeval.nodes.judges.spec import JudgeSpecError
from todeval.nodes.simulation.agents import (
    AGENT_ERROR,
    AGENT_STOP,
    AgentRequest,
    AgentSpecError,
    AgentTurn,
    agent_for,
    termination_reason,
)
from todeval.nodes.simulation.agents.callable import CallableAgent
from todeval.nodes.simulation.agents.chat_model import ChatModelAgent
from todeval.nodes.simulation.agents.graph import GraphAgent
from todeval.nodes.simulation.agents.messages import to_langchain
from todeval.nodes.simulation.agents.remote import RemoteAgent
from todeval.nodes.simulation.agents.replay import ReplayAgent
from todeval.nodes.simulation.environments.base import ToolCall
from todeval.stores.paths import data_dir

RUN40 = data_dir() / "agentchangebench" / "simulations" / "banking_gpt-4.1_run40.json"
POLICY = "You are a banking assistant. Authenticate the customer before any account action."
TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_customer_by_phone",
            "description": "Find a customer by phone number.",
            "parameters": {
                "type": "object",
                # maxLength: the llama.cpp server turns schemas into grammars (integration).
                "properties": {"phone_number": {"type": "string", "maxLength": 20}},
                "required": ["phone_number"],
            },
        },
    }
]
# A conversation as tau2 stores it: the tool result's call id under "id".
CONVERSATION: list[dict[str, Any]] = [
    {"role": "assistant", "content": "Hi! How can I help you today?"},
    {"role": "user", "content": "I can't log in. My phone is +15551234567."},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "name": "get_customer_by_phone",
                "arguments": {"phone_number": "+15551234567"},
            }
        ],
    },
    {"id": "c1", "role": "tool", "content": '{"customer_id": "cust_101"}', "error": False},
]


@pytest.fixture(autouse=True)
def _fresh_limits() -> Iterator[None]:
    LIMITS.configure(LLMPolicy())
    yield
    LIMITS.configure(LLMPolicy())


def respond(agent: Any, messages: list[dict[str, Any]] | None = None) -> AgentTurn:
    turn: AgentTurn = agent.respond(
        AgentRequest(CONVERSATION if messages is None else messages, TOOLS, "t1", 0)
    )
    return turn


# -- chat model -----------------------------------------------------------------------------


def chat_agent(script: list[Any], **kwargs: Any) -> tuple[ChatModelAgent, ScriptedChatModel]:
    model = ScriptedChatModel(script)
    agent = ChatModelAgent("openai:gpt-4.1", policy=POLICY, chat_model=model, backoff_s=0, **kwargs)
    return agent, model


def test_a_chat_model_agent_calls_a_tool_and_sees_the_policy_and_the_conversation() -> None:
    agent, model = chat_agent(
        [tool_call_message("get_customer_by_phone", {"phone_number": "+15551234567"})]
    )
    turn = respond(agent, CONVERSATION[:2])
    assert turn.error is None and turn.content is None
    assert turn.tool_calls == [
        ToolCall(
            id="call_get_customer_by_phone",
            name="get_customer_by_phone",
            arguments={"phone_number": "+15551234567"},
        )
    ]
    sent = model.calls[0]
    assert isinstance(sent[0], SystemMessage) and sent[0].content == POLICY
    assert [type(m) for m in sent[1:]] == [AIMessage, HumanMessage]
    assert model.call_kwargs[0]["tool_choice"] == "auto"
    assert model.call_kwargs[0]["tools"][0]["function"]["name"] == "get_customer_by_phone"


def test_tool_results_reach_the_model_as_tool_messages_or_folded_into_user_text() -> None:
    agent, model = chat_agent(["Welcome back, Maria."])
    assert respond(agent).content == "Welcome back, Maria."
    tool_message = model.calls[0][-1]
    assert isinstance(tool_message, ToolMessage) and tool_message.tool_call_id == "c1"

    folding, folded_model = chat_agent(["Welcome back."], fold_tool_results=True)
    respond(folding)
    last = folded_model.calls[0][-1]
    assert isinstance(last, HumanMessage) and "cust_101" in str(last.content)
    assert not any(isinstance(m, ToolMessage) for m in folded_model.calls[0])


def test_a_tool_only_assistant_turn_has_text_for_openai_compatible_servers() -> None:
    # llama.cpp rejects the content null ChatOpenAI sends for an empty assistant turn.
    plain = to_langchain(CONVERSATION)[2]
    spaced = to_langchain(CONVERSATION, tool_call_text=" ")[2]
    assert isinstance(plain, AIMessage) and plain.content == "" and plain.tool_calls
    assert isinstance(spaced, AIMessage) and spaced.content == " "
    server = ChatModelAgent(
        "openai:smol@http://127.0.0.1:9/v1", policy=POLICY, chat_model=ScriptedChatModel()
    )
    assert server._tool_call_text == " "


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        (
            AIMessage(
                content="",
                invalid_tool_calls=[
                    {"name": "get_account", "args": "{oops", "id": "x", "error": "bad json"}
                ],
            ),
            "not valid JSON",
        ),
        (AIMessage(content="", tool_calls=[{"name": "", "args": {}, "id": "x"}]), "no name"),
        (AIMessage(content="   "), "neither text nor tool calls"),
    ],
)
def test_malformed_model_output_is_an_error_turn(reply: AIMessage, problem: str) -> None:
    agent, _ = chat_agent([reply])
    turn = respond(agent)
    assert turn.error is not None and problem in turn.error
    assert termination_reason(turn) == AGENT_ERROR and not turn.tool_calls


def test_a_failing_model_is_retried_then_ends_the_conversation_with_the_reason() -> None:
    ACCOUNTING.reset()
    agent, model = chat_agent([TimeoutError("read timed out"), "Hello!"], max_retries=1)
    assert respond(agent).content == "Hello!" and len(model.calls) == 2
    broken, _ = chat_agent([TimeoutError("read timed out")] * 2, max_retries=1)
    turn = respond(broken)
    assert turn.error is not None and "read timed out" in turn.error and "2 attempts" in turn.error
    usage = ACCOUNTING.snapshot()["agent"]
    assert (usage["calls"], usage["failures"], usage["retries"]) == (2, 1, 2)


def test_a_call_the_budget_refuses_is_an_error_turn_without_a_model_call() -> None:
    LIMITS.configure(LLMPolicy(max_calls=0))
    agent, model = chat_agent(["never sent"])
    turn = respond(agent)
    assert turn.error is not None and "budget" in turn.error and model.calls == []


def test_agent_for_builds_a_chat_model_through_the_judges_loader(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built: dict[str, Any] = {}

    def fake_loader(spec: Any, **kwargs: Any) -> ScriptedChatModel:
        built.update(spec=spec.raw, **kwargs)
        return ScriptedChatModel(["Hi."])

    monkeypatch.setattr(chat_model_module, "load_chat_model", fake_loader)
    agent = agent_for("openai:smol@http://127.0.0.1:9/v1", policy=POLICY, max_output_tokens=50)
    assert respond(agent).content == "Hi."
    # max_tokens in the request body (llama.cpp ignores max_completion_tokens), a timeout, no
    # SDK retries: the adapter retries itself under the run's limits.
    assert built["extra_body"] == {"max_tokens": 50}
    assert built["timeout"] == LIMITS.policy.timeout_s and built["max_retries"] == 0


# -- LangGraph graph, in process and on a server ---------------------------------------------


def _lookup_node(state: MessagesState, config: RunnableConfig) -> dict[str, Any]:
    tools = config["configurable"]["tools"]
    said = str(state["messages"][-1].content)
    if "?" in said:
        return {"messages": [AIMessage("Let me check.")]}
    name = tools[0]["function"]["name"]
    return {"messages": [tool_call_message(name, {"phone_number": "+15551234567"})]}


def _build_lookup_graph() -> Any:
    builder = StateGraph(MessagesState)
    builder.add_node("lookup", _lookup_node)
    builder.add_edge(START, "lookup")
    return builder


LOOKUP_GRAPH = _build_lookup_graph()  # a StateGraph: the adapter compiles it


def _silent_node(state: MessagesState) -> dict[str, Any]:
    return {"messages": []}


SILENT_GRAPH = StateGraph(MessagesState).add_node("noop", _silent_node).add_edge(START, "noop")


def test_a_graph_by_import_path_answers_with_its_last_ai_message() -> None:
    agent = agent_for("graph:tests.unit.test_agents:LOOKUP_GRAPH", policy=POLICY)
    assert isinstance(agent, GraphAgent)
    turn = respond(agent, CONVERSATION[:2])
    assert turn.error is None and turn.tool_calls[0].name == "get_customer_by_phone"
    # The bare import path means the same.
    bare = agent_for("tests.unit.test_agents:LOOKUP_GRAPH", policy=POLICY)
    asked = [*CONVERSATION[:1], {"role": "user", "content": "Can you help?"}]
    assert respond(bare, asked).content == "Let me check."


def test_a_graph_that_adds_no_ai_message_or_raises_gives_an_error_turn() -> None:
    silent = agent_for("graph:tests.unit.test_agents:SILENT_GRAPH", policy=POLICY)
    assert "added no AI message" in (respond(silent).error or "")
    with pytest.raises(AgentSpecError, match="no 'NOPE'"):
        agent_for("graph:tests.unit.test_agents:NOPE", policy=POLICY)
    with pytest.raises(AgentSpecError, match="not a LangGraph graph"):
        agent_for("graph:tests.unit.test_agents:POLICY", policy=POLICY)


class FakeRuns:
    def __init__(self, reply: Any) -> None:
        self.reply, self.calls = reply, []  # type: ignore[var-annotated]

    def wait(self, thread_id: Any, assistant_id: str, **kwargs: Any) -> Any:
        self.calls.append((thread_id, assistant_id, kwargs))
        if isinstance(self.reply, Exception):
            raise self.reply
        return {"messages": [*kwargs["input"]["messages"], self.reply]}


class FakeClient:
    def __init__(self, reply: Any) -> None:
        self.runs = FakeRuns(reply)


def test_a_remote_assistant_gets_role_messages_and_its_ai_message_becomes_the_turn() -> None:
    reply = {
        "type": "ai",
        "content": "",
        "tool_calls": [
            {"name": "get_customer_by_phone", "args": {"phone_number": "+1555"}, "id": "r1"}
        ],
    }
    client = FakeClient(reply)
    agent = RemoteAgent("agent@http://127.0.0.1:2024", policy=POLICY, client=client)
    turn = respond(agent)
    assert turn.tool_calls == [
        ToolCall(id="r1", name="get_customer_by_phone", arguments={"phone_number": "+1555"})
    ]
    thread, assistant, kwargs = client.runs.calls[0]
    sent = kwargs["input"]["messages"]
    assert thread is None and assistant == "agent"
    assert sent[0] == {"role": "system", "content": POLICY}
    assert sent[3]["tool_calls"][0]["args"] == {"phone_number": "+15551234567"}
    assert sent[4] == {
        "role": "tool",
        "content": '{"customer_id": "cust_101"}',
        "tool_call_id": "c1",
    }
    assert kwargs["config"]["configurable"]["tools"] == TOOLS


def test_a_remote_failure_is_an_error_turn_and_a_bad_spec_fails_early() -> None:
    down = RemoteAgent(
        "agent@http://127.0.0.1:2024", policy=POLICY, client=FakeClient(ConnectionError("refused"))
    )
    assert "refused" in (respond(down).error or "")
    with pytest.raises(AgentSpecError, match="langgraph:<assistant_id>@<url>"):
        agent_for("langgraph:agent", policy=POLICY)


# -- plain callables --------------------------------------------------------------------------


def lookup_agent(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]], *, policy: str
) -> Any:
    messages.clear()  # a rude agent: must not touch the harness's record
    return {
        "role": "assistant",
        "content": f"({len(policy)} chars of policy)",
        "tool_calls": [
            {"id": "k1", "name": "get_customer_by_phone", "arguments": '{"phone_number": "+1"}'}
        ],
    }


def list_arguments(messages: Any, tools: Any) -> Any:
    return {"tool_calls": [{"id": "k", "function": {"name": "get_account", "arguments": "[1, 2]"}}]}


def nameless(messages: Any, tools: Any) -> Any:
    return {"tool_calls": [{"id": "k", "arguments": {}}]}


def raising(messages: Any, tools: Any) -> Any:
    raise RuntimeError("agent crashed")


def nothing(messages: Any, tools: Any) -> Any:
    return None


def user_message(messages: Any, tools: Any) -> Any:
    return {"role": "user", "content": "I am the user now"}


def test_a_callable_gets_a_copy_and_the_keywords_it_takes() -> None:
    agent = agent_for("python:tests.unit.test_agents:lookup_agent", policy=POLICY)
    conversation = [dict(m) for m in CONVERSATION]
    turn = respond(agent, conversation)
    assert len(conversation) == len(CONVERSATION)
    assert turn.content == f"({len(POLICY)} chars of policy)"
    assert turn.tool_calls == [
        ToolCall(id="k1", name="get_customer_by_phone", arguments={"phone_number": "+1"})
    ]
    plain = CallableAgent("inline", policy=POLICY, function=lambda messages, tools: "Sure.")
    assert respond(plain).content == "Sure."


class Receptionist:
    """A user's agent object: ``respond`` keeps the positional messages/tools signature."""

    def respond(self, messages: Any, tools: Any, *, task_id: str, trial: int) -> Any:
        return f"{task_id}/{trial}: {len(messages)} messages, {len(tools)} tools"


RECEPTIONIST = Receptionist()


def test_a_python_agent_object_is_called_with_messages_tools_task_and_trial() -> None:
    agent = agent_for("python:tests.unit.test_agents:RECEPTIONIST", policy=POLICY)
    assert respond(agent).content == f"t1/0: {len(CONVERSATION)} messages, {len(TOOLS)} tools"


@pytest.mark.parametrize(
    ("function", "problem"),
    [
        ("list_arguments", "must be a JSON object, got list"),
        ("nameless", "has no name"),
        ("raising", "RuntimeError: agent crashed"),
        ("nothing", "expected a message, got NoneType"),
        ("user_message", "role 'user'"),
    ],
)
def test_bad_callable_behaviour_is_an_error_turn(function: str, problem: str) -> None:
    turn = respond(agent_for(f"python:tests.unit.test_agents:{function}", policy=POLICY))
    assert (
        turn.error is not None and problem in turn.error and turn.error.startswith("agent_error:")
    )


def test_unknown_or_broken_specs_fail_with_a_clear_error() -> None:
    for spec in ("", "gpt-4.1", "local", "robot:arm"):
        with pytest.raises(AgentSpecError, match="agent spec"):
            agent_for(spec, policy=POLICY)
    with pytest.raises(AgentSpecError, match="cannot import"):
        agent_for("python:no_such_module_here:fn", policy=POLICY)
    with pytest.raises(AgentSpecError, match="cannot read"):
        agent_for("replay:/no/such/results.json", policy=POLICY)
    with pytest.raises(AgentSpecError, match="names no chat model"):
        ChatModelAgent("local:x", policy=POLICY)
    with pytest.raises(JudgeSpecError, match="unknown provider"):
        ChatModelAgent("robot:arm", policy=POLICY)


# -- replay -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def run40() -> dict[str, Any]:
    if not RUN40.is_file():
        pytest.skip(f"{RUN40} not found (set TODEVAL_DATA_DIR)")
    data: dict[str, Any] = json.loads(RUN40.read_text())
    return data


def test_replay_reproduces_every_recorded_agent_turn_of_run40(run40: dict[str, Any]) -> None:
    agent = agent_for(f"replay:{RUN40}", policy="ignored")
    assert isinstance(agent, ReplayAgent) and len(agent.conversations) == 40
    replayed = 0
    for simulation in run40["simulations"]:
        messages = simulation["messages"]
        task, trial = simulation["task_id"], simulation["trial"]
        for index, message in enumerate(messages):
            if message["role"] != "assistant":
                continue
            # What the user says does not matter: only how many agent turns came before.
            history = [
                m if m["role"] != "user" else {"role": "user", "content": "whatever"}
                for m in messages[:index]
            ]
            turn = agent.respond(AgentRequest(history, [], task, trial))
            assert turn.error is None
            assert turn.content == (message["content"] or None)
            recorded = [
                (c["id"], c["name"], c["arguments"]) for c in message.get("tool_calls") or []
            ]
            assert [(c.id, c.name, c.arguments) for c in turn.tool_calls] == recorded
            replayed += 1
        done = agent.respond(AgentRequest(messages, [], task, trial))
        assert termination_reason(done) == AGENT_STOP and "ran out" in (done.error or "")
    assert replayed == sum(
        m["role"] == "assistant" for s in run40["simulations"] for m in s["messages"]
    )


def test_replay_of_a_missing_conversation_or_a_malformed_recorded_turn(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    bad_call = {"role": "assistant", "content": None, "tool_calls": [{"id": "x", "arguments": {}}]}
    path.write_text(
        json.dumps({"simulations": [{"task_id": "t1", "trial": 0, "messages": [bad_call]}]})
    )
    agent = ReplayAgent(path)
    turn = agent.respond(AgentRequest([], [], "t1", 0))
    assert termination_reason(turn) == AGENT_ERROR and "malformed" in (turn.error or "")
    missing = agent.respond(AgentRequest([], [], "t1", 3))
    assert "trial 3" in (missing.error or "") and "trials [0]" in (missing.error or "")
    (tmp_path / "empty.json").write_text('{"simulations": []}')
    with pytest.raises(AgentSpecError, match="holds no"):
        ReplayAgent(tmp_path / "empty.json")
