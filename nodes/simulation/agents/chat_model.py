"""A chat model with tool calling as the agent under test (``<provider>:<model>[@<base_url>]``).

The domain policy is its system message and tools are bound with ``tool_choice="auto"``
(llama.cpp ignores tools without one). Calls go through the run's limits (the endpoint's agent
gate, :meth:`~nodes.judges.limits.LLMLimits.agent_gate`: as many in flight as conversations)
and are retried, honouring ``Retry-After``; a call that still fails, or a malformed answer, ends the
conversation with an ``agent_error`` turn. Each call carries the conversation's seed
(:func:`conversation_seed`) where the provider takes one (OpenAI-compatible servers).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import Runnable, RunnableConfig

from todeval.nodes.judges.accounting import ACCOUNTING
from todeval.nodes.judges.limits import LIMITS, CallRefused, note_unanswered, seed_kwargs
from todeval.nodes.judges.llm import load_chat_model
from todeval.nodes.judges.provider_options import client_kwargs, output_cap_kwargs, retry_after_s
from todeval.nodes.judges.redact import error_text
from todeval.nodes.judges.spec import parse_spec
from todeval.nodes.simulation.agents.base import AgentRequest, AgentTurn
from todeval.nodes.simulation.agents.loader import AgentSpecError
from todeval.nodes.simulation.agents.messages import to_langchain
from todeval.nodes.simulation.agents.turns import failed_turn, guarded, turn_from_ai_message

AGENT_ROLE = "agent"
"""The accounting key of agent calls (``llm_usage`` in summaries)."""


def conversation_seed(trial: int) -> int | None:
    """A conversation's seed: the run's (``--seed``) plus its trial; None in an unseeded run.

    ``todeval simulate`` numbers them so (``graphs.corpus.simulation.simulation_records``).
    """
    run = LIMITS.policy.seed
    return None if run is None else run + trial


class ChatModelAgent:
    """A chat model answering with text or tool calls (``chat_model``: a ready one, for tests).

    Raises:
        JudgeSpecError: If ``spec`` is malformed or names an unknown provider.
        JudgeConfigError: If the model cannot be built here (package, key).
        AgentSpecError: If ``spec`` is a local spec.
    """

    def __init__(
        self,
        spec: str,
        *,
        policy: str,
        chat_model: BaseChatModel | None = None,
        temperature: float | None = 0.0,
        max_output_tokens: int | None = None,
        fold_tool_results: bool = False,
        max_retries: int = 2,
        backoff_s: float = 1.0,
    ) -> None:
        self.spec = parse_spec(spec)
        if self.spec.kind != "llm":
            raise AgentSpecError(f"agent spec {spec!r} names no chat model ('<provider>:<model>')")
        self.name = self.spec.raw
        self.policy = policy
        self.fold_tool_results = fold_tool_results
        self.max_retries, self.backoff_s = max_retries, backoff_s
        compatible = self.spec.provider in ("openai", "azure_openai") and bool(self.spec.base_url)
        self._tool_call_text = " " if compatible else ""
        kwargs: dict[str, Any] = client_kwargs(self.spec, LIMITS.policy.timeout_s)
        kwargs |= output_cap_kwargs(self.spec, max_output_tokens)
        if temperature is not None:
            kwargs["temperature"] = temperature
        self.model = chat_model if chat_model is not None else load_chat_model(self.spec, **kwargs)
        self._config: RunnableConfig = {
            "run_name": f"agent:{self.spec.raw}",
            "tags": ["agent"],
            "metadata": {"agent_spec": self.spec.raw},
        }

    def respond(self, request: AgentRequest) -> AgentTurn:
        """One model call (with retries) on the conversation so far."""
        return guarded(self.name, lambda: self._respond(request))

    def _respond(self, request: AgentRequest) -> AgentTurn:
        tools = request.tools
        conversation = to_langchain(
            request.messages,
            system=self.policy,
            fold_tool_results=self.fold_tool_results,
            tool_call_text=self._tool_call_text,
        )
        runnable: Runnable[LanguageModelInput, BaseMessage] = (
            self.model.bind_tools([dict(tool) for tool in tools], tool_choice="auto")
            if tools
            else self.model
        )
        seed = seed_kwargs(self.spec.provider, conversation_seed(request.trial))
        reply = self._call(runnable, conversation, seed)
        if isinstance(reply, AgentTurn):
            return reply
        return turn_from_ai_message(reply, position=len(request.messages))

    def _call(
        self,
        runnable: Runnable[LanguageModelInput, BaseMessage],
        conversation: list[BaseMessage],
        seed: Mapping[str, int],
    ) -> AIMessage | AgentTurn:
        gate = LIMITS.agent_gate(f"{self.spec.provider}@{self.spec.base_url or ''}")
        started = time.perf_counter()
        reason = "no attempt made"
        for attempt in range(self.max_retries + 1):
            try:
                LIMITS.spend()
                with gate.slot():
                    reply = runnable.invoke(conversation, config=self._config, **seed)
            except CallRefused as refused:
                return self._failed(f"the call was not made: {refused}", started, attempt, True)
            except Exception as exc:  # timeouts, rate limits, dropped connections, HTTP errors
                gate.failed(exc)
                reason = f"model call failed: {error_text(exc, 200)}"
                if attempt < self.max_retries and self.backoff_s > 0:
                    time.sleep(max(self.backoff_s * 2**attempt, retry_after_s(exc)))
                continue
            gate.succeeded()
            if not isinstance(reply, AIMessage):
                return failed_turn(f"{self.name} returned {type(reply).__name__}, not a message")
            usage: Mapping[str, Any] = reply.usage_metadata or {}
            prompt, completion = (
                int(usage.get("input_tokens", 0)),
                int(usage.get("output_tokens", 0)),
            )
            LIMITS.charge(self.spec.raw, prompt, completion)
            ACCOUNTING.record(
                AGENT_ROLE,
                prompt_tokens=prompt,
                completion_tokens=completion,
                latency_s=time.perf_counter() - started,
                retries=attempt,
                judge=self.spec.raw,
            )
            return reply
        return self._failed(
            f"{reason} (gave up after {self.max_retries + 1} attempts)",
            started,
            self.max_retries,
            False,
        )

    def _failed(self, reason: str, started: float, retries: int, refused: bool) -> AgentTurn:
        # A failed or refused call is "unanswered": the runner keeps the thread unfinished, so
        # a rerun asks the agent again rather than keeping a conversation cut short by an outage.
        note_unanswered(f"{AGENT_ROLE}: {reason}")
        ACCOUNTING.record(
            AGENT_ROLE,
            latency_s=time.perf_counter() - started,
            failed=True,
            retries=retries,
            refused=refused,
            judge=self.spec.raw,
        )
        return failed_turn(reason)
