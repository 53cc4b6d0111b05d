"""Tool faults injected on purpose: a tool times out, fails, answers nothing, garbled or stale.

Real tools fail, and an agent that then claims success is the failure users fear most
(tau2-bench #167, PR #177). ``--tool-faults RATE[:KIND,...]`` wraps the domain's environment in
a :class:`FaultyEnvironment`: each call, by its position in the conversation's tool log, gets a
fault with probability ``RATE``, drawn from a hash of (seed, task, trial, position), so a
resumed conversation (which replays its log) meets exactly the same faults, and two runs with
the same seed inject the same ones. The kinds:

- ``timeout``: the tool does not answer in time; the call does not run.
- ``error``: the service fails (HTTP 503); the call does not run.
- ``empty``: the call runs; the agent reads an empty result.
- ``corrupted``: the call runs; the agent reads the first half of the result.
- ``stale``: the call runs; the agent reads what the same call gave on the database as the
  trial started (a cache that missed this trial's changes).

Every faulted result carries ``fault`` (the kind), which the transcript keeps and the recovery
figures read (:mod:`evals.metrics.simulation.tool_faults`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from todeval.nodes.simulation.environments.base import ToolCall, ToolEnvironment, ToolResult

FAULT_KINDS = ("timeout", "error", "empty", "corrupted", "stale")
_NOT_RUN = {
    "timeout": "Error: timeout: the tool did not answer within 30 seconds.",
    "error": "Error: service unavailable (HTTP 503); please try again later.",
}


class ToolFaultSpecError(ValueError):
    """A ``--tool-faults`` spec that is not ``RATE[:KIND,...]``."""


@dataclass(frozen=True)
class ToolFaults:
    """Which calls fail and how: a rate, the kinds drawn from, and the seed."""

    rate: float
    kinds: tuple[str, ...] = FAULT_KINDS
    seed: int = 0

    @classmethod
    def parse(cls, spec: str | None, *, seed: int = 0) -> ToolFaults | None:
        """``RATE`` (every kind) or ``RATE:KIND,KIND``; None for an empty spec or ``none``.

        Raises:
            ToolFaultSpecError: The rate is not a number in [0, 1] or a kind is unknown.
        """
        text = (spec or "").strip()
        if not text or text.lower() == "none":
            return None
        rate_text, _, kinds_text = text.partition(":")
        try:
            rate = float(rate_text)
        except ValueError:
            raise ToolFaultSpecError(
                f"tool faults {spec!r}: expected RATE[:KIND,...], e.g. 0.2 or 0.1:timeout,error"
            ) from None
        if not 0.0 <= rate <= 1.0:
            raise ToolFaultSpecError(f"tool faults {spec!r}: the rate must be within 0 and 1")
        kinds = tuple(k.strip().lower() for k in kinds_text.split(",") if k.strip()) or FAULT_KINDS
        unknown = sorted(set(kinds) - set(FAULT_KINDS))
        if unknown:
            raise ToolFaultSpecError(
                f"tool faults {spec!r}: unknown kind(s) {', '.join(unknown)}; "
                f"known: {', '.join(FAULT_KINDS)}"
            )
        return cls(rate=rate, kinds=kinds, seed=seed)

    def spec(self) -> str:
        """The spec this was parsed from (canonical form)."""
        return f"{self.rate:g}:{','.join(self.kinds)}"

    def kind_at(self, task_id: str, trial: int, position: int) -> str | None:
        """The fault of the call at ``position`` of the tool log, or None."""
        digest = hashlib.sha256(f"{self.seed}|{task_id}|{trial}|{position}".encode()).digest()
        draw = int.from_bytes(digest[:8], "big") / 2**64
        if draw >= self.rate:
            return None
        return self.kinds[int.from_bytes(digest[8:16], "big") % len(self.kinds)]


class FaultyEnvironment:
    """A domain environment whose calls fail as :class:`ToolFaults` decides (see module doc).

    Args:
        inner: The trial's environment.
        faults: The rate, kinds and seed.
        task_id: The task (part of each fault's draw).
        trial: The trial (part of each fault's draw).
        fresh: A fresh environment of the same trial, for ``stale`` results.
    """

    def __init__(
        self,
        inner: ToolEnvironment,
        faults: ToolFaults,
        *,
        task_id: str,
        trial: int,
        fresh: Callable[[], ToolEnvironment],
    ) -> None:
        self.inner = inner
        self.faults = faults
        self.domain = inner.domain
        self._draw = (task_id, trial)
        self._fresh = fresh
        self._position = 0

    def tool_schemas(self) -> list[dict[str, Any]]:
        """The inner environment's tools."""
        return self.inner.tool_schemas()

    def call(self, call: ToolCall) -> ToolResult:
        """Run ``call`` with the fault its position draws (if any)."""
        kind = self.faults.kind_at(*self._draw, self._position)
        self._position += 1
        if kind is None:
            return self.inner.call(call)
        if kind in _NOT_RUN:
            return ToolResult(
                call_id=call.id,
                name=call.name,
                content=_NOT_RUN[kind],
                error=True,
                error_kind="environment",
                fault=kind,
            )
        result = self.inner.call(call)
        if kind == "empty":
            content = ""
        elif kind == "corrupted":
            content = result.content[: len(result.content) // 2]
        else:  # stale
            content = self._fresh().call(call).content
        return result.model_copy(update={"content": content, "fault": kind})

    def replay(self, log: Sequence[ToolCall]) -> None:
        """The fresh database, then ``log`` with the same faults as when it was made."""
        self.inner.replay([])
        self._position = 0
        for call in log:
            self.call(call)

    def snapshot(self) -> Mapping[str, Any]:
        """The inner database now."""
        return self.inner.snapshot()
