"""What every LLM call goes through: limits per provider, a circuit breaker, a budget, dry runs.

One :class:`LLMPolicy` holds the run's settings (``Context.llm_*``; the corpus drivers install
it with :func:`configure_llm` before judges are built). Each provider endpoint (provider plus
base URL) gets a :class:`Gate`:

* **concurrency**: at most ``max_concurrency`` calls in flight (threads and tasks alike); the
  agent under test's endpoint (:meth:`LLMLimits.agent_gate`) has a gate of its own with no such
  cap: the conversations in flight bound its calls (each waits for one agent answer at a time),
  so ``--max-concurrency N`` has N agent calls in flight whatever ``--llm-concurrency`` says;
* **rate**: at most ``requests_per_minute``, through langchain-core's ``InMemoryRateLimiter``;
* **circuit breaker**: after ``breaker_failures`` consecutive failed calls the gate opens and
  refuses calls for ``breaker_cooldown_s``, then lets one trial call through; a refused call
  makes the label null with the reason, it never waits on a dead endpoint;
* **budget**: after ``max_calls`` model calls in the run (all providers), or once the priced
  cost reaches ``budget_usd``, no more calls are made: labels are null with the reason.

A label left null because its call failed, was refused or kept answering malformed output is
*unanswered* (only a prompt longer than the context window is final): the runner watches
for them (:func:`watch_unanswered`) and does not keep such a record's thread as finished, so the
next run asks again for exactly those labels (the response cache answers the rest).

**Seeds**: a call made inside :func:`call_seed` carries that seed, else the run's
(``LLMPolicy.seed``, set by ``todeval simulate --seed``), to providers that accept one
(:func:`seed_kwargs`: OpenAI and OpenAI-compatible servers such as llama.cpp's); the others get
none.

``dry_run`` makes no call at all: each would-be request is counted (calls and prompt tokens per
role, from the real rendered prompt) and answered null with the reason "dry run".
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass, field

from langchain_core.rate_limiters import InMemoryRateLimiter

from todeval.nodes.context import Context
from todeval.nodes.judges.redact import error_text

CHARS_PER_TOKEN = 4.0
"""Prompt tokens are estimated from characters where the provider's count is unknown."""


@dataclass(frozen=True)
class LLMPolicy:
    """The run's settings for LLM calls (see ``nodes.context.Context``'s ``llm_*`` fields)."""

    timeout_s: float = 60.0
    max_concurrency: int = 4
    requests_per_minute: float | None = None
    breaker_failures: int = 5
    breaker_cooldown_s: float = 30.0
    max_calls: int | None = None
    budget_usd: float | None = None
    prices: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    """Model spec -> (USD per 1k prompt tokens, USD per 1k completion tokens)."""
    dry_run: bool = False
    seed: int | None = None
    """The run's seed, sent with every call whose provider accepts one (None: no seed)."""


SEED_PROVIDERS = frozenset({"openai", "azure_openai"})
"""Providers whose chat API takes ``seed`` (an OpenAI-compatible base URL included: llama.cpp,
vLLM). Others may reject an unknown field, so they get none."""

_CALL_SEED: ContextVar[int | None] = ContextVar("todeval_call_seed", default=None)


@contextmanager
def call_seed(seed: int | None) -> Iterator[None]:
    """Calls made in this block carry ``seed`` (a conversation's), not the run's."""
    token = _CALL_SEED.set(seed)
    try:
        yield
    finally:
        _CALL_SEED.reset(token)


def current_seed() -> int | None:
    """The seed of a call made here: :func:`call_seed`'s, else the run's (or None)."""
    seed = _CALL_SEED.get()
    return seed if seed is not None else LIMITS.policy.seed


def seed_kwargs(provider: str | None, seed: int | None) -> dict[str, int]:
    """``{"seed": seed}`` for a provider that accepts one, else nothing."""
    return {"seed": seed} if seed is not None and provider in SEED_PROVIDERS else {}


class CallRefused(Exception):
    """A call the policy did not make (open circuit, budget reached, dry run)."""


class Gate:
    """The limits of one provider endpoint."""

    def __init__(self, policy: LLMPolicy, *, capped: bool = True) -> None:
        self._policy = policy
        self._slots = threading.BoundedSemaphore(max(1, policy.max_concurrency)) if capped else None
        rps = (policy.requests_per_minute or 0) / 60.0
        self._limiter = InMemoryRateLimiter(
            requests_per_second=rps, check_every_n_seconds=0.05, max_bucket_size=1
        ) if rps > 0 else None  # fmt: skip
        self._lock = threading.Lock()
        self._failures = 0
        self._opened_at: float | None = None
        self._last_error = ""

    def _admit(self) -> None:
        with self._lock:
            if self._opened_at is None:
                return
            if time.monotonic() - self._opened_at < self._policy.breaker_cooldown_s:
                raise CallRefused(
                    f"circuit open: {self._failures} consecutive failed calls to this provider "
                    f"(last: {self._last_error}); not called"
                )
            self._opened_at = None  # half open: one trial call goes through

    def succeeded(self) -> None:
        """A call returned (whatever its content)."""
        with self._lock:
            self._failures, self._opened_at = 0, None

    def failed(self, error: Exception) -> None:
        """A call raised; enough in a row opens the circuit."""
        with self._lock:
            self._failures += 1
            self._last_error = error_text(error, 120)  # shown in every refused label's reason
            if self._failures >= self._policy.breaker_failures:
                self._opened_at = time.monotonic()

    @contextmanager
    def slot(self, spend: Callable[[], None] | None = None) -> Iterator[None]:
        """Hold a concurrency slot and a rate-limit token for one call (blocking).

        ``spend`` (the run's budget, :meth:`LLMLimits.spend`) is taken once the circuit has
        admitted the call: a call the open circuit refuses is not made, so it costs nothing.
        """
        self._admit()
        if spend is not None:
            spend()
        with self._slots if self._slots is not None else nullcontext():
            if self._limiter is not None:
                self._limiter.acquire()
            yield

    @asynccontextmanager
    async def aslot(self, spend: Callable[[], None] | None = None) -> AsyncIterator[None]:
        """Async twin of :meth:`slot` (waits without blocking the event loop)."""
        self._admit()
        if spend is not None:
            spend()
        slots = self._slots
        while slots is not None and not slots.acquire(blocking=False):
            await asyncio.sleep(0.01)
        try:
            if self._limiter is not None:
                await self._limiter.aacquire()
            yield
        finally:
            if slots is not None:
                slots.release()


class LLMLimits:
    """The process's policy, its gates and the run's spending (reset per run)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.policy = LLMPolicy()
        self._gates: dict[str, Gate] = {}
        self._calls = 0
        self._cost = 0.0
        self._requested: set[str] = set()

    def configure(self, policy: LLMPolicy) -> None:
        """Install a run's policy; gates and spending start afresh."""
        with self._lock:
            self.policy = policy
            self._gates.clear()
            self._calls, self._cost = 0, 0.0
            self._requested.clear()

    def first_request(self, key: str) -> bool:
        """Whether a dry run meets this request for the first time (a repeat would be cached)."""
        with self._lock:
            first = key not in self._requested
            self._requested.add(key)
            return first

    def gate(self, endpoint: str) -> Gate:
        """The gate of a provider endpoint (``provider`` or ``provider@base_url``)."""
        with self._lock:
            if endpoint not in self._gates:
                self._gates[endpoint] = Gate(self.policy)
            return self._gates[endpoint]

    def agent_gate(self, endpoint: str) -> Gate:
        """The gate of the agent under test's endpoint: its own, with no concurrency cap.

        Circuit breaker, rate and budget apply as to any call; the number of calls in flight is
        the number of conversations in flight (the runner's ``max_concurrency``), as each
        conversation waits for one agent answer at a time. The judges' and the simulated user's
        calls to the same endpoint keep their own gate and its ``max_concurrency``.
        """
        key = f"agent:{endpoint}"
        with self._lock:
            if key not in self._gates:
                self._gates[key] = Gate(self.policy, capped=False)
            return self._gates[key]

    def spend(self) -> None:
        """Take one call from the budget, or refuse it (budget reached, dry run)."""
        policy = self.policy
        with self._lock:
            if policy.dry_run:
                raise CallRefused("dry run: the request was counted, not sent")
            if policy.max_calls is not None and self._calls >= policy.max_calls:
                raise CallRefused(f"LLM call budget reached ({policy.max_calls} calls); not called")
            if policy.budget_usd is not None and self._cost >= policy.budget_usd:
                raise CallRefused(
                    f"LLM cost budget reached (${self._cost:.4f} of ${policy.budget_usd}); "
                    "not called"
                )
            self._calls += 1

    def charge(self, spec: str, prompt_tokens: int, completion_tokens: int) -> None:
        """Add a call's priced cost (models without a price cost nothing here)."""
        price = self.policy.prices.get(spec)
        if price is None:
            return
        with self._lock:
            self._cost += prompt_tokens / 1000 * price[0] + completion_tokens / 1000 * price[1]

    def spent(self) -> dict[str, float | int]:
        """Calls made and priced cost so far in this run."""
        with self._lock:
            return {"calls": self._calls, "cost_usd": round(self._cost, 6)}


LIMITS = LLMLimits()
"""The process-wide limits every LLM judge goes through."""


def configure_llm(policy: LLMPolicy) -> None:
    """Install the run's LLM policy (the corpus drivers call it before building judges)."""
    LIMITS.configure(policy)


def policy_for(context: Context) -> LLMPolicy:
    """The LLM policy a run's context sets."""
    return LLMPolicy(
        timeout_s=context.llm.timeout_s,
        max_concurrency=context.llm.max_concurrency,
        requests_per_minute=context.llm.requests_per_minute,
        breaker_failures=context.llm.breaker_failures,
        max_calls=context.llm.max_calls,
        budget_usd=context.llm.budget_usd,
        prices={spec: (float(p[0]), float(p[1])) for spec, p in context.llm.prices.items()},
        dry_run=context.llm.dry_run,
    )


_UNANSWERED: ContextVar[list[str] | None] = ContextVar("todeval_unanswered", default=None)


@contextmanager
def watch_unanswered() -> Iterator[list[str]]:
    """Collect the reasons of labels left null by a failed or refused call in this block.

    LangGraph runs a graph's nodes in copies of the caller's context, so calls made by any
    node of a thread started inside the block land in the returned list.
    """
    reasons: list[str] = []
    token = _UNANSWERED.set(reasons)
    try:
        yield reasons
    finally:
        _UNANSWERED.reset(token)


def note_unanswered(reason: str) -> None:
    """A label is null because its call failed or was refused (not for bad model output)."""
    reasons = _UNANSWERED.get()
    if reasons is not None:
        reasons.append(reason)
