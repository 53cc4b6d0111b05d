"""A scripted fake chat model for offline tests of anything that calls an LLM.

``ScriptedChatModel`` answers each call with the next item of its script and records what
it was sent::

    model = ScriptedChatModel(
        [
            TimeoutError("read timed out"),  # raised: the caller should retry
            '<think>turn 2 starts a new goal</think>{"label": "yes"}',  # an AIMessage
            {"label": "yes"},  # a tool call to the first bound tool (structured output)
            tool_call_message("search", {"q": "flights"}),  # any AIMessage, as is
            lambda messages: f"you said {len(messages)} things",  # computed from the input
        ]
    )
    judge = LLMJudge(..., chat_model=model)
    assert len(model.calls) == 1  # every call's messages, in order

String replies carry ``usage_metadata`` (whitespace-separated words, in and out) so token
accounting can be asserted. When the script runs out, the ``fallback`` item answers; without
one the call fails the test.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import LanguageModelInput
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field, PrivateAttr

#: One scripted reply: text, a message, an exception (instance or class) to raise, a dict of
#: tool arguments, or a callable computing one of those from the messages received.
ScriptItem = Any


def tool_call_message(name: str, args: dict[str, Any], *, content: str = "") -> AIMessage:
    """An AIMessage that calls tool ``name`` with ``args`` (for agents and structured output)."""
    return AIMessage(
        content=content, tool_calls=[{"name": name, "args": args, "id": f"call_{name}"}]
    )


def count_tokens(text: str) -> int:
    """The fake's token count: whitespace-separated words."""
    return len(text.split())


class ScriptedChatModel(GenericFakeChatModel):
    """A chat model that plays a script and records every call.

    Attributes:
        script: The replies, consumed one per call (see the module docstring).
        fallback: The reply once the script is used up; None fails the call.
        calls: The messages of every call, in order.
        call_kwargs: The keyword arguments of every call (``tools``, ``tool_choice``...).
    """

    messages: Iterator[AIMessage | str] = Field(default_factory=lambda: iter(()))
    script: list[ScriptItem] = Field(default_factory=list)
    fallback: ScriptItem = None
    calls: list[list[BaseMessage]] = Field(default_factory=list)
    call_kwargs: list[dict[str, Any]] = Field(default_factory=list)
    _position: int = PrivateAttr(default=0)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    def __init__(self, script: Sequence[ScriptItem] = (), **kwargs: Any) -> None:
        super().__init__(script=list(script), **kwargs)

    @property
    def _llm_type(self) -> str:
        return "scripted-fake-chat-model"

    @property
    def remaining(self) -> int:
        """Script items not yet played."""
        return len(self.script) - self._position

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Bind tools like a real provider: they reach each call as ``tools``."""
        formatted = [convert_to_openai_tool(tool) for tool in tools]
        return self.bind(tools=formatted, tool_choice=tool_choice, **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        with self._lock:
            self.calls.append(list(messages))
            self.call_kwargs.append(dict(kwargs))
            item = self._next_item()
        return ChatResult(generations=[ChatGeneration(message=self._reply(item, messages, kwargs))])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        """One chunk holding the whole reply, so tool calls and usage survive streaming."""
        message = self._generate(messages, stop, run_manager, **kwargs).generations[0].message
        assert isinstance(message, AIMessage)
        chunk = AIMessageChunk(
            content=message.content,
            id=message.id,
            usage_metadata=message.usage_metadata,
            additional_kwargs=message.additional_kwargs,
            response_metadata=message.response_metadata,
            tool_call_chunks=[
                {
                    "name": call["name"],
                    "args": json.dumps(call["args"]),
                    "id": call["id"],
                    "index": i,
                }
                for i, call in enumerate(message.tool_calls)
            ],
            chunk_position="last",
        )
        if run_manager:
            run_manager.on_llm_new_token(
                str(message.text), chunk=ChatGenerationChunk(message=chunk)
            )
        yield ChatGenerationChunk(message=chunk)

    def _next_item(self) -> ScriptItem:
        if self._position < len(self.script):
            self._position += 1
            return self.script[self._position - 1]
        if self.fallback is not None:
            return self.fallback
        raise AssertionError(
            f"ScriptedChatModel ran out of replies after {len(self.script)} calls; "
            f"last messages: {[str(m.content)[:80] for m in self.calls[-1]]}"
        )

    def _reply(
        self, item: ScriptItem, messages: list[BaseMessage], kwargs: dict[str, Any]
    ) -> AIMessage:
        if isinstance(item, BaseException):
            raise item
        if isinstance(item, type) and issubclass(item, BaseException):
            raise item()
        if callable(item):
            return self._reply(item(messages), messages, kwargs)
        prompt_tokens = sum(count_tokens(str(m.text)) for m in messages)
        if isinstance(item, str):
            return AIMessage(content=item, usage_metadata=_usage(prompt_tokens, count_tokens(item)))
        if isinstance(item, dict):
            tools = kwargs.get("tools") or [{"function": {"name": "output"}}]
            message = tool_call_message(tools[0]["function"]["name"], item)
            message.usage_metadata = _usage(prompt_tokens, count_tokens(json.dumps(item)))
            return message
        if isinstance(item, AIMessage):
            return item
        raise TypeError(f"cannot play script item {item!r}")


def _usage(prompt_tokens: int, completion_tokens: int) -> UsageMetadata:
    return {
        "input_tokens": prompt_tokens,
        "output_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
