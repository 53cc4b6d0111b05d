"""A real OpenAI-compatible server: SmolLM2-135M-Instruct under llama-cpp-python 0.3.36.

What the server (chat format ``chatml-function-calling``) does with what a client sends, through
the ``openai`` client and through ``langchain_openai.ChatOpenAI``; see the ``llm_server_url``
fixture. Latencies are printed (``pytest -s``), never asserted. The model is tiny: the tests
check the protocol (shapes, grammar-constrained JSON, tool-call plumbing), not the answers.

What works and what does not against this server:

* ``response_format={"type": "json_object", "schema": S}``: grammar-constrained JSON for S.
  Give every string a ``max_length`` so a looping model still closes its JSON, and parse with
  ``json.loads(..., strict=False)``: the grammar lets raw newlines into strings.
  ``{"type": "json_schema", ...}`` is rejected (HTTP 500, a request validation error).
* tools: a named ``tool_choice`` always yields that tool call, its arguments constrained to the
  tool's schema. ``"auto"`` lets the model choose (only ``chatml-function-calling`` supports it;
  ``chatml`` and the GGUF's own template answer in text). ``"required"`` (LangChain's ``"any"``)
  fails with HTTP 500, and ``tools`` without a ``tool_choice`` are ignored (plain text).
* ``ChatOpenAI.with_structured_output``: ``method="function_calling"`` works;
  ``"json_schema"`` (ChatOpenAI's default) is rejected; ``"json_mode"`` returns JSON of the
  model's own shape unless the schema is sent too (``extra_body`` overriding ``response_format``).
* ``ChatOpenAI(max_tokens=N)`` sends ``max_completion_tokens``, which this server ignores
  (generation runs on to the end of the context); ``extra_body={"max_tokens": N}`` caps it.
* An assistant message with ``tool_calls`` and ``content: null`` (what ChatOpenAI sends for an
  ``AIMessage`` with tool calls and no text) is rejected (HTTP 500); ``content: ""`` works.
"""

from __future__ import annotations

import json
import time
import urllib.request
from typing import Annotated, Any

import openai
import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_openai import ChatOpenAI
from pydantic import BaseModel, Field, StringConstraints

from tests.integration.llm_server import LLM_API_KEY, LLM_MODEL

pytestmark = pytest.mark.integration

Sentence = Annotated[str, StringConstraints(min_length=40, max_length=100)]


class Booking(BaseModel):
    city: Annotated[str, StringConstraints(max_length=40)]
    guests: int
    confirmed: bool


class Story(BaseModel):
    """About 200 tokens of structured output (greedy decoding would leave the strings empty
    without their ``min_length``)."""

    title: Annotated[str, StringConstraints(min_length=5, max_length=60)]
    sentences: list[Sentence] = Field(min_length=8, max_length=8)


WEATHER_TOOL: Any = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "maxLength": 40}},
            "required": ["city"],
        },
    },
}
WEATHER_QUESTION: Any = [
    {"role": "system", "content": "You are a weather assistant. Use the tools."},
    {"role": "user", "content": "What's the weather in Berlin?"},
]
BOOKING_REQUEST = "Book a table in Paris for 4 people, confirmed. Reply in JSON."


@pytest.fixture(scope="module")
def client(llm_server_url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=llm_server_url, api_key=LLM_API_KEY, max_retries=0)


def chat_model(llm_server_url: str, **kwargs: Any) -> ChatOpenAI:
    return ChatOpenAI(
        base_url=llm_server_url,
        api_key=LLM_API_KEY,
        model=LLM_MODEL,
        temperature=0,
        max_retries=0,
        **kwargs,
    )


def timed(label: str, started: float, **figures: Any) -> None:
    extra = " ".join(f"{key}={value}" for key, value in figures.items())
    print(f"\n[llm-server] {label}: {time.perf_counter() - started:.2f}s {extra}")


def schema_format(model: type[BaseModel]) -> Any:
    """llama-cpp-python's ``response_format`` for JSON constrained to ``model``'s schema."""
    return {"type": "json_object", "schema": model.model_json_schema()}


def loads(text: str) -> Any:
    # strict=False: the server's JSON grammar lets raw control characters into strings.
    return json.loads(text, strict=False)


def test_models_endpoint_names_the_model(llm_server_url: str) -> None:
    with urllib.request.urlopen(f"{llm_server_url}/models", timeout=10) as response:
        models = json.load(response)
    assert [model["id"] for model in models["data"]] == [LLM_MODEL]


def test_plain_chat_completion_answers(client: openai.OpenAI) -> None:
    started = time.perf_counter()
    reply = client.chat.completions.create(
        model=LLM_MODEL,
        messages=[{"role": "user", "content": "What is the capital of France? One word."}],
        max_tokens=24,
        temperature=0,
    )
    assert reply.usage is not None
    timed("short answer", started, tokens=reply.usage.completion_tokens)
    content = reply.choices[0].message.content
    assert isinstance(content, str) and content.strip()
    assert 0 < reply.usage.completion_tokens <= 24


def test_json_object_with_schema_is_valid_against_the_model(client: openai.OpenAI) -> None:
    started = time.perf_counter()
    reply = client.chat.completions.create(
        model=LLM_MODEL,
        messages=[{"role": "user", "content": BOOKING_REQUEST}],
        response_format=schema_format(Booking),
        max_tokens=200,
        temperature=0,
    )
    timed("json_object + schema", started)
    assert reply.choices[0].finish_reason == "stop"
    booking = Booking.model_validate(loads(reply.choices[0].message.content or ""))
    assert booking.city


def test_a_200_token_structured_answer(client: openai.OpenAI) -> None:
    started = time.perf_counter()
    reply = client.chat.completions.create(
        model=LLM_MODEL,
        messages=[
            {"role": "user", "content": "Tell a story about a dragon in eight sentences, as JSON."}
        ],
        response_format=schema_format(Story),
        max_tokens=900,  # above the schema's bound: the JSON always closes
        temperature=0,
    )
    assert reply.usage is not None
    timed("structured story", started, tokens=reply.usage.completion_tokens)
    assert reply.choices[0].finish_reason == "stop"
    story = Story.model_validate(loads(reply.choices[0].message.content or ""))
    assert len(story.sentences) == 8


def test_json_schema_response_format_is_rejected(client: openai.OpenAI) -> None:
    with pytest.raises(openai.APIStatusError) as raised:
        client.chat.completions.create(
            model=LLM_MODEL,
            messages=[{"role": "user", "content": BOOKING_REQUEST}],
            response_format={
                "type": "json_schema",
                "json_schema": {"name": "Booking", "schema": Booking.model_json_schema()},
            },
            max_tokens=50,
        )
    assert raised.value.status_code == 500
    assert "json_object" in str(raised.value)


def test_a_named_tool_choice_returns_that_tool_call(client: openai.OpenAI) -> None:
    started = time.perf_counter()
    reply = client.chat.completions.create(
        model=LLM_MODEL,
        messages=WEATHER_QUESTION,
        tools=[WEATHER_TOOL],
        tool_choice={"type": "function", "function": {"name": "get_weather"}},
        max_tokens=60,
        temperature=0,
    )
    timed("forced tool call", started)
    calls: Any = reply.choices[0].message.tool_calls
    assert calls and calls[0].function.name == "get_weather"
    assert isinstance(loads(calls[0].function.arguments)["city"], str)


def test_auto_tool_choice_calls_the_tool(client: openai.OpenAI) -> None:
    # chatml-function-calling first picks "functions.<name>:" or "message:" greedily
    # (temperature 0 whatever the request says), so this is deterministic.
    started = time.perf_counter()
    reply = client.chat.completions.create(
        model=LLM_MODEL,
        messages=WEATHER_QUESTION,
        tools=[WEATHER_TOOL],
        tool_choice="auto",
        max_tokens=60,
    )
    timed("auto tool call", started)
    assert reply.choices[0].finish_reason == "tool_calls"
    calls: Any = reply.choices[0].message.tool_calls
    assert calls and calls[0].function.name == "get_weather"


def test_tools_without_tool_choice_are_ignored(client: openai.OpenAI) -> None:
    reply = client.chat.completions.create(
        model=LLM_MODEL,
        messages=WEATHER_QUESTION,
        tools=[WEATHER_TOOL],
        max_tokens=16,
    )
    assert reply.choices[0].message.tool_calls is None


def test_tool_result_turn_needs_string_content(client: openai.OpenAI) -> None:
    """The assistant turn that made the call must carry ``content: ""``, not ``null``."""
    call = {
        "id": "call-1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Berlin"}'},
    }
    tool_turn = {"role": "tool", "tool_call_id": "call-1", "content": "sunny, 25 C"}

    def answer(content: str | None) -> Any:
        messages = [
            *WEATHER_QUESTION,
            {"role": "assistant", "content": content, "tool_calls": [call]},
            tool_turn,
        ]
        return client.chat.completions.create(
            model=LLM_MODEL,
            messages=messages,
            max_tokens=24,
        )

    assert isinstance(answer("").choices[0].message.content, str)
    with pytest.raises(openai.APIStatusError) as raised:
        answer(None)
    assert raised.value.status_code == 500


# --- through langchain_openai.ChatOpenAI ---------------------------------------------------


def test_structured_output_by_function_calling(llm_server_url: str) -> None:
    model = chat_model(llm_server_url, extra_body={"max_tokens": 200})
    started = time.perf_counter()
    booking = model.with_structured_output(Booking, method="function_calling").invoke(
        [HumanMessage(BOOKING_REQUEST)]
    )
    timed("ChatOpenAI function_calling", started)
    assert isinstance(booking, Booking)


def test_structured_output_by_json_schema_is_rejected(llm_server_url: str) -> None:
    """ChatOpenAI's default method sends ``response_format.type = "json_schema"``."""
    model = chat_model(llm_server_url, extra_body={"max_tokens": 200})
    with pytest.raises(openai.APIStatusError) as raised:
        model.with_structured_output(Booking).invoke([HumanMessage(BOOKING_REQUEST)])
    assert raised.value.status_code == 500


def test_structured_output_by_json_mode(llm_server_url: str) -> None:
    """Plain json_mode sends no schema: JSON comes back, of the model's own shape. With the
    schema sent through ``extra_body`` (which overrides ``response_format``) it parses."""
    plain = chat_model(llm_server_url, extra_body={"max_tokens": 200})
    started = time.perf_counter()
    result = plain.with_structured_output(Booking, method="json_mode", include_raw=True).invoke(
        [HumanMessage(BOOKING_REQUEST)]
    )
    timed("ChatOpenAI json_mode", started, parsed=result["parsed"] is not None)
    assert isinstance(result["raw"], AIMessage)

    with_schema = chat_model(
        llm_server_url, extra_body={"max_tokens": 200, "response_format": schema_format(Booking)}
    )
    started = time.perf_counter()
    booking = with_schema.with_structured_output(Booking, method="json_mode").invoke(
        [HumanMessage(BOOKING_REQUEST)]
    )
    timed("ChatOpenAI json_mode + schema", started)
    assert isinstance(booking, Booking)


def test_max_tokens_caps_only_through_extra_body(llm_server_url: str) -> None:
    """``max_tokens=`` goes out as ``max_completion_tokens``, which the server ignores."""
    messages = [HumanMessage("Write a long story about a dragon.")]
    payload = chat_model(llm_server_url, max_tokens=8)._get_request_payload(messages)
    assert payload.get("max_completion_tokens") == 8 and "max_tokens" not in payload

    capped = chat_model(llm_server_url, extra_body={"max_tokens": 8})
    started = time.perf_counter()
    reply = capped.invoke(messages)
    assert reply.usage_metadata is not None
    timed(
        "ChatOpenAI extra_body max_tokens=8", started, tokens=reply.usage_metadata["output_tokens"]
    )
    assert reply.usage_metadata["output_tokens"] <= 8
    assert reply.response_metadata["finish_reason"] == "length"


def test_tool_calling_conversation(llm_server_url: str) -> None:
    """bind_tools needs ``tool_choice`` (here "auto"); the turn after the tool result goes
    through once the calling AIMessage has text (ChatOpenAI sends ``content: null`` otherwise)."""
    model = chat_model(llm_server_url, extra_body={"max_tokens": 60})
    agent = model.bind_tools([WEATHER_TOOL], tool_choice="auto")
    history: list[Any] = [
        SystemMessage("You are a weather assistant. Use the tools."),
        HumanMessage("What's the weather in Berlin?"),
    ]
    started = time.perf_counter()
    first = agent.invoke(history)
    timed("ChatOpenAI bind_tools auto", started)
    assert isinstance(first, AIMessage) and first.tool_calls
    call = first.tool_calls[0]
    assert call["name"] == "get_weather"

    history += [
        AIMessage(" ", tool_calls=first.tool_calls),
        ToolMessage("sunny, 25 C", tool_call_id=call["id"]),
    ]
    started = time.perf_counter()
    second = model.invoke(history)
    timed("ChatOpenAI after tool result", started)
    assert isinstance(second.content, str)
