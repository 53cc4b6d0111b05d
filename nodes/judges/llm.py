"""The LLM judge: a paper's prompt answered by a chat model and parsed into a pydantic model.

The only module that builds chat models: tests patch :func:`load_chat_model` or pass
``chat_model=``.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import time
from collections.abc import Generator, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from langchain.chat_models import init_chat_model  # noqa: TID251 - the one sanctioned caller
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable, RunnableConfig
from pydantic import BaseModel, ValidationError

from todeval.nodes.judges.accounting import ACCOUNTING, JudgeAccounting
from todeval.nodes.judges.limits import (
    LIMITS,
    CallRefused,
    Gate,
    current_seed,
    note_unanswered,
    seed_kwargs,
)
from todeval.nodes.judges.parsing import OutputParseError, parse_json_output, validation_error
from todeval.nodes.judges.provider_options import (
    client_kwargs,
    context_overflow,
    decoding_kwargs,
    estimate_tokens,
    missing_key_message,
    missing_package_message,
    retry_after_s,
)
from todeval.nodes.judges.quoting import data_system, fill_prompt
from todeval.nodes.judges.redact import error_text, redact, redact_traces, register_secret
from todeval.nodes.judges.result import JudgeResult
from todeval.nodes.judges.spec import (
    PROVIDERS,
    JudgeConfigError,
    JudgeSpec,
    JudgeSpecError,
    ProviderInfo,
    parse_spec,
)
from todeval.stores.llm_cache import LLMCache, default_llm_cache

OutT = TypeVar("OutT", bound=BaseModel)

#: Sent after an answer that could not be used. Fields: ``{error}`` what was wrong,
#: ``{schema}`` the output model's JSON schema.
RETRY_PROMPT = (
    "Your previous reply could not be used.\n{error}\n\n"
    "Reply again following the original instructions. End your reply with a single JSON "
    "value matching this JSON schema:\n{schema}"
)

# Statuses that no retry can fix: bad credentials, no access, no such model.
_CONFIG_STATUSES = {401: "rejected the credentials", 403: "denied access", 404: "has no such model"}


def load_chat_model(spec: JudgeSpec, **kwargs: Any) -> BaseChatModel:
    """Build the chat model an LLM spec names, through ``init_chat_model``.

    For ``openai`` with a base URL and no ``OPENAI_API_KEY``, a placeholder key is passed: local
    OpenAI-compatible servers ignore it, but the client refuses to start without one.

    Raises:
        JudgeSpecError: If ``spec`` is not an LLM spec of a known provider.
        JudgeConfigError: If the provider package is missing, the key is not set, or the
            provider rejects the arguments; the message says how to fix it.
    """
    if spec.kind != "llm" or not spec.provider or not spec.model:
        raise JudgeSpecError(f"judge spec {spec.raw!r} does not name an LLM ('<provider>:<model>')")
    info = PROVIDERS.get(spec.provider)
    if info is None:
        raise JudgeSpecError(
            f"judge spec {spec.raw!r}: unknown provider {spec.provider!r}; "
            f"known providers: {', '.join(sorted(PROVIDERS))}"
        )
    for name, value in kwargs.items():  # a key given in code is masked in errors like an env key
        if name.endswith("api_key") and isinstance(value, str):
            register_secret(value)
    if spec.base_url:
        kwargs.setdefault("base_url", spec.base_url)
        if spec.provider == "openai" and not _has_key(info, kwargs):
            kwargs["api_key"] = "unused"
    if not package_installed(info):
        raise JudgeConfigError(missing_package_message(spec, info))
    try:
        model = init_chat_model(spec.model, model_provider=spec.provider, **kwargs)
    except ImportError as exc:  # installed, but it does not import (a version clash, say)
        raise JudgeConfigError(
            f"judge spec {spec.raw!r}: the package {info.package} is installed but does not "
            f"import: {type(exc).__name__}: {exc}"
        ) from exc
    except Exception as exc:
        if not _has_key(info, kwargs):
            raise JudgeConfigError(missing_key_message(spec, info)) from exc
        raise JudgeConfigError(
            f"cannot build the chat model for {spec.raw!r}: {redact(str(exc))}"
        ) from exc
    if not isinstance(model, BaseChatModel):  # a configurable wrapper; never for a full spec
        raise JudgeConfigError(f"{spec.raw!r} did not produce a chat model")
    if not _has_key(info, kwargs):
        # Some clients only notice a missing key on the first request; fail before any work.
        raise JudgeConfigError(missing_key_message(spec, info))
    return model


def package_installed(info: ProviderInfo) -> bool:
    """Whether the provider's package can be found (it may still fail to import)."""
    return importlib.util.find_spec(info.module) is not None


def _has_key(info: ProviderInfo, kwargs: Mapping[str, Any]) -> bool:
    # Clients take the key under several names (api_key, openai_api_key, ...).
    if not info.key_env or any(kwargs[name] for name in kwargs if name.endswith("api_key")):
        return True
    return any(os.environ.get(name) for name in info.key_env)


@dataclass(frozen=True)
class _Call:
    messages: list[BaseMessage]


@dataclass(frozen=True)
class _Sleep:
    seconds: float


_Step = _Call | _Sleep


@dataclass
class _Outcome(Generic[OutT]):
    value: OutT | None = None
    text: str | None = None  # what goes into the cache
    reason: str | None = None
    attempts: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    refused: bool = False
    final: bool = False
    """No later attempt can do better (the prompt is longer than the context window)."""

    def add_usage(self, message: AIMessage) -> None:
        usage: Mapping[str, Any] = message.usage_metadata or {}
        self.prompt_tokens += int(usage.get("input_tokens", 0))
        self.completion_tokens += int(usage.get("output_tokens", 0))


class LLMJudge(Generic[OutT]):
    """A judge role answered by a chat model: render, call, parse, retry, cache, account.

    Bad output and failed calls never raise: after ``max_retries`` retries the result has
    ``value=None`` and a reason. Configuration problems raise :class:`JudgeConfigError`, at
    construction where possible.

    Args:
        mode: ``"json"`` reads JSON from the text (after ``<think>`` reasoning), with every
            provider; ``"structured"`` uses the provider's structured output.
        backoff_s: Wait ``backoff_s * 2**n`` seconds before retry ``n`` after a failed call; a
            malformed answer is retried at once, with feedback.
        cache: A response cache, None, or ``"default"``.
        temperature: None leaves the provider's default (for models that reject it).
        max_output_tokens: The longest answer the role needs (a rambling model costs no more).
        constrained: Decode under the output schema where the provider can
            (:func:`decoding_kwargs`); parse-and-retry stays for the others.
        decoding_schema: A stricter schema than ``output_model`` for constrained decoding.
    """

    def __init__(
        self,
        *,
        role: str,
        spec: str | JudgeSpec,
        prompt: str,
        output_model: type[OutT],
        system: str | None = None,
        mode: Literal["json", "structured"] = "json",
        max_retries: int = 3,
        backoff_s: float = 1.0,
        cache: LLMCache | None | Literal["default"] = "default",
        accounting: JudgeAccounting | None = None,
        chat_model: BaseChatModel | None = None,
        temperature: float | None = 0.0,
        model_kwargs: Mapping[str, Any] | None = None,
        max_output_tokens: int | None = 1024,
        constrained: bool = True,
        decoding_schema: Mapping[str, Any] | None = None,
    ) -> None:
        self.spec = parse_spec(spec) if isinstance(spec, str) else spec
        if self.spec.kind != "llm":
            raise JudgeSpecError(f"LLMJudge needs an LLM spec, got {self.spec.raw!r}")
        if mode not in ("json", "structured") or max_retries < 0 or backoff_s < 0:
            raise ValueError(f"bad LLMJudge settings: {mode=}, {max_retries=}, {backoff_s=}")
        self.role, self.prompt, self.system = role, prompt, system
        self.output_model, self.mode, self.temperature = output_model, mode, temperature
        self.max_retries, self.backoff_s = max_retries, backoff_s
        self.max_output_tokens, self.constrained = max_output_tokens, constrained
        self.decoding_schema = dict(decoding_schema or output_model.model_json_schema())
        self._model_kwargs = dict(model_kwargs or {})
        self.chat_model = chat_model
        self._bound: Runnable[LanguageModelInput, Any] | None = None
        redact_traces()  # provider errors reach the tracer before this judge sees them
        if chat_model is not None or not LIMITS.policy.dry_run:
            self._runnable  # noqa: B018 - a judge that cannot run fails now, not per record
        # After the model: a judge that cannot run should not touch the disk.
        self.cache = default_llm_cache() if isinstance(cache, str) else cache
        self.accounting = accounting if accounting is not None else ACCOUNTING
        self._schema = json.dumps(self.decoding_schema, sort_keys=True)
        self._config: RunnableConfig = {
            "run_name": f"judge:{role}",
            "tags": ["judge", f"judge:{role}"],
            "metadata": {"judge_role": role, "judge_spec": self.spec.raw},
        }

    @property
    def _gate(self) -> Gate:
        """This endpoint's gate under the run's policy (looked up per call: runs reset it)."""
        return LIMITS.gate(f"{self.spec.provider}@{self.spec.base_url or ''}")

    def __repr__(self) -> str:
        return f"LLMJudge(role={self.role!r}, spec={self.spec.raw!r}, mode={self.mode!r})"

    def render(self, variables: Mapping[str, Any]) -> list[BaseMessage]:
        """Return the messages sent for ``variables``: the system message, then the prompt.

        The prompt is filled by :func:`~nodes.judges.quoting.fill_prompt`: transcript text
        sits in data blocks whose delimiters no value can forge, and the system message says
        that it is data (:func:`~nodes.judges.quoting.data_system`).
        """
        try:
            text = fill_prompt(self.prompt, variables)
        except KeyError as exc:
            raise ValueError(
                f"judge {self.role!r}: the prompt needs {exc.args[0]!r}; got {sorted(variables)}"
            ) from exc
        system = data_system(self.prompt, self.system)
        head: list[BaseMessage] = [SystemMessage(system)] if system else []
        return [*head, HumanMessage(text)]

    def invoke(self, variables: Mapping[str, Any]) -> JudgeResult[OutT]:
        """Judge once: render the prompt with ``variables`` and ask the model (or the cache).

        Returns the parsed answer, or ``value=None`` with a reason after the last retry; raises
        :class:`JudgeConfigError` if the provider rejects the credentials or the model name.
        """
        messages = self.render(variables)
        started = time.perf_counter()
        key = self._cache_key(messages)
        cached = self._from_cache(key, started) or self._dry_repeat(key, started)
        if cached is not None:
            return cached
        return self._finish(self._drive(self._attempts(messages)), key, started)

    async def ainvoke(self, variables: Mapping[str, Any]) -> JudgeResult[OutT]:
        """Async twin of :meth:`invoke` (``await model.ainvoke``, non-blocking backoff)."""
        messages = self.render(variables)
        started = time.perf_counter()
        key = self._cache_key(messages)
        # SQLite lookups take microseconds; not worth a thread hop.
        cached = self._from_cache(key, started) or self._dry_repeat(key, started)
        if cached is not None:
            return cached
        return self._finish(await self._adrive(self._attempts(messages)), key, started)

    # -- construction ------------------------------------------------------------------

    @property
    def _runnable(self) -> Runnable[LanguageModelInput, Any]:
        """The bound model, loaded on first use (a dry run needs no package or key)."""
        if self._bound is None:
            if self.chat_model is None:
                self.chat_model = self._load(self._model_kwargs)
            self._bound = self._bind(self.chat_model)
        return self._bound

    def _load(self, model_kwargs: Mapping[str, Any]) -> BaseChatModel:
        kwargs = dict(model_kwargs)
        if self.temperature is not None:
            kwargs.setdefault("temperature", self.temperature)
        if self.mode == "json" and self.constrained:
            kwargs = (
                decoding_kwargs(
                    self.spec, self.output_model, self.max_output_tokens, self.decoding_schema
                )
                | kwargs
            )
        kwargs = client_kwargs(self.spec, LIMITS.policy.timeout_s) | kwargs
        return load_chat_model(self.spec, **kwargs)

    def _bind(self, model: BaseChatModel) -> Runnable[LanguageModelInput, Any]:
        if self.mode == "json":
            return model
        try:
            return model.with_structured_output(self.output_model, include_raw=True)
        except NotImplementedError as exc:
            raise JudgeConfigError(
                f"{self.spec.raw!r} has no structured output here; use mode='json'"
            ) from exc

    # -- the attempt loop, shared by invoke and ainvoke ---------------------------------

    def _attempts(self, messages: list[BaseMessage]) -> Generator[_Step, Any, _Outcome[OutT]]:
        """The retry loop, shared by the sync and async drivers.

        It yields ``_Call`` and ``_Sleep`` for the driver to perform and returns the outcome.
        """
        outcome: _Outcome[OutT] = _Outcome()
        conversation = list(messages)
        for attempt in range(self.max_retries + 1):
            outcome.attempts = attempt + 1
            try:
                reply = yield _Call(list(conversation))
            except CallRefused as refused:  # budget, open circuit, dry run: not retried
                outcome.reason = str(refused)
                outcome.refused = True
                outcome.prompt_tokens += estimate_tokens(conversation)
                return outcome
            except Exception as exc:  # timeouts, rate limits, dropped connections: transient
                _raise_if_config_error(self.spec, exc)
                if context_overflow(exc):  # no retry makes the prompt shorter
                    outcome.reason = (
                        "the prompt is longer than the model's context window, so it was not "
                        f"judged (never truncated): {' '.join(redact(str(exc)).split())[:160]}"
                    )
                    outcome.final = True
                    return outcome
                outcome.reason = f"model call failed: {error_text(exc)}"[:200]
                if attempt < self.max_retries and self.backoff_s > 0:
                    yield _Sleep(max(self.backoff_s * 2**attempt, retry_after_s(exc)))
                continue
            message = _reply_message(reply)
            outcome.add_usage(message)
            try:
                outcome.value, outcome.text = self._interpret(reply, message)
            except OutputParseError as exc:
                outcome.reason = exc.reason
                conversation += self._feedback(message, exc)
                continue
            outcome.reason = None
            return outcome
        outcome.reason = f"{outcome.reason} (gave up after {outcome.attempts} attempts)"
        return outcome

    def _drive(self, steps: Generator[_Step, Any, _Outcome[OutT]]) -> _Outcome[OutT]:
        gate = self._gate
        step = next(steps)
        while True:
            try:
                if isinstance(step, _Sleep):
                    time.sleep(step.seconds)
                    step = steps.send(None)
                    continue
                try:
                    with gate.slot(LIMITS.spend):  # circuit first: a refused call costs nothing
                        reply = self._runnable.invoke(
                            step.messages, config=self._config, **self._seed()
                        )
                except CallRefused as refused:
                    step = steps.throw(refused)
                except Exception as exc:
                    gate.failed(exc)
                    step = steps.throw(exc)
                else:
                    gate.succeeded()
                    step = steps.send(reply)
            except StopIteration as stop:
                outcome: _Outcome[OutT] = stop.value
                return outcome

    async def _adrive(self, steps: Generator[_Step, Any, _Outcome[OutT]]) -> _Outcome[OutT]:
        gate = self._gate
        step = next(steps)
        while True:
            try:
                if isinstance(step, _Sleep):
                    await asyncio.sleep(step.seconds)
                    step = steps.send(None)
                    continue
                try:
                    async with gate.aslot(LIMITS.spend):
                        reply = await self._runnable.ainvoke(
                            step.messages, config=self._config, **self._seed()
                        )
                except CallRefused as refused:
                    step = steps.throw(refused)
                except Exception as exc:
                    gate.failed(exc)
                    step = steps.throw(exc)
                else:
                    gate.succeeded()
                    step = steps.send(reply)
            except StopIteration as stop:
                outcome: _Outcome[OutT] = stop.value
                return outcome

    def _seed(self) -> dict[str, int]:
        """The call's seed for a provider that takes one (in json mode only).

        Structured output's chain passes no call arguments on to the model.
        """
        return seed_kwargs(self.spec.provider, current_seed()) if self.mode == "json" else {}

    def _interpret(self, reply: Any, message: AIMessage) -> tuple[OutT, str]:
        """Validate one reply; return the value and the text to cache."""
        refusal = message.additional_kwargs.get("refusal")
        if refusal:
            raise OutputParseError(f"model refused: {' '.join(str(refusal).split())[:120]}")
        text = str(message.text)  # content blocks (thinking, tool use) reduced to the text
        if self.mode == "json":
            return parse_json_output(text, self.output_model), text
        parsed, error = reply.get("parsed"), reply.get("parsing_error")
        if isinstance(parsed, self.output_model):
            return parsed, parsed.model_dump_json()
        if error is not None:
            raise _structured_error(self.output_model, error)
        # No tool call at all: some models answer in plain text anyway; accept JSON there.
        value = parse_json_output(text, self.output_model)
        return value, value.model_dump_json()

    def _feedback(self, message: AIMessage, error: OutputParseError) -> list[BaseMessage]:
        """The turn pair appended before a retry: what the model said, what was wrong."""
        said = str(message.text)
        if not said.strip() and message.tool_calls:
            said = json.dumps(message.tool_calls[0]["args"])
        retry = RETRY_PROMPT.format(error=error.feedback, schema=self._schema)
        # Plain text only: replaying tool calls would need tool results, and some providers
        # reject empty assistant turns.
        return [AIMessage(said.strip() or "(empty reply)"), HumanMessage(retry)]

    # -- cache and accounting -------------------------------------------------------------

    def _cache_key(self, messages: list[BaseMessage]) -> str:
        rendered = json.dumps([[m.type, m.content] for m in messages], ensure_ascii=False)
        settings = f"{self.temperature!r}/{self.max_output_tokens}/{self.constrained}"
        if seeded := self._seed():  # an answer to another seed is another answer
            settings += f"/seed={seeded['seed']}"
        return LLMCache.make_key(self.spec.raw, self.mode, settings, self._schema, rendered)

    def _from_cache(self, key: str, started: float) -> JudgeResult[OutT] | None:
        text = self.cache.get(key) if self.cache is not None else None
        if text is None:
            return None
        try:
            value = parse_json_output(text, self.output_model)
        except OutputParseError:
            return None  # written by an older output model; ask again
        self.accounting.record(
            self.role,
            cache_hit=True,
            latency_s=time.perf_counter() - started,
            judge=self.spec.raw,
        )
        return JudgeResult(value=value, judge=self.spec.raw)

    def _dry_repeat(self, key: str, started: float) -> JudgeResult[OutT] | None:
        """In a dry run, a request met before: a real run's cache would answer it (no call)."""
        if not LIMITS.policy.dry_run or LIMITS.first_request(key):
            return None
        self.accounting.record(
            self.role,
            cache_hit=True,
            latency_s=time.perf_counter() - started,
            judge=self.spec.raw,
        )
        reason = "dry run: the same request as an earlier one (a real run's cache answers it)"
        note_unanswered(f"{self.role}: {reason}")
        return JudgeResult(value=None, judge=self.spec.raw, reason=reason)

    def _finish(self, outcome: _Outcome[OutT], key: str, started: float) -> JudgeResult[OutT]:
        if outcome.value is not None and outcome.text is not None and self.cache is not None:
            self.cache.put(key, outcome.text)
        LIMITS.charge(self.spec.raw, outcome.prompt_tokens, outcome.completion_tokens)
        if outcome.value is None and not outcome.final:
            # Failed calls, refusals (limits) and output still malformed after the retries
            # (a refusal, cut-off JSON): the next run asks again; only an overflow is final.
            note_unanswered(f"{self.role}: {outcome.reason}")
        self.accounting.record(
            self.role,
            prompt_tokens=outcome.prompt_tokens,
            completion_tokens=outcome.completion_tokens,
            latency_s=time.perf_counter() - started,
            failed=outcome.value is None,
            retries=outcome.attempts - 1,
            refused=outcome.refused,
            judge=self.spec.raw,
        )
        return JudgeResult(value=outcome.value, judge=self.spec.raw, reason=outcome.reason)


def _reply_message(reply: Any) -> AIMessage:
    """The AIMessage in a reply (structured mode wraps it as ``{"raw": ...}``)."""
    message = reply.get("raw") if isinstance(reply, dict) else reply
    if not isinstance(message, AIMessage):
        raise TypeError(f"chat model returned {type(message).__name__}, not an AIMessage")
    return message


def _structured_error(output_model: type[BaseModel], error: object) -> OutputParseError:
    cause = error if isinstance(error, ValidationError) else getattr(error, "__cause__", None)
    if isinstance(cause, ValidationError):
        return validation_error(output_model, cause)
    return OutputParseError(f"invalid structured output: {error}"[:200], str(error))


def _raise_if_config_error(spec: JudgeSpec, exc: Exception) -> None:
    """Re-raise errors that retrying cannot fix as :class:`JudgeConfigError`."""
    if isinstance(exc, JudgeConfigError):
        raise exc
    status = getattr(exc, "status_code", None)
    if status in _CONFIG_STATUSES:
        raise JudgeConfigError(
            f"the {spec.provider} API {_CONFIG_STATUSES[status]} for judge spec {spec.raw!r} "
            f"(HTTP {status}): {redact(str(exc))}"
        ) from exc
