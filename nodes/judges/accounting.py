"""Per-role usage of the LLM judges: calls, cache hits, failures, retries, tokens, latency."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import asdict, dataclass


@dataclass
class RoleUsage:
    """Usage of one judge role, summed over its judge invocations.

    ``calls`` counts cache hits too; ``retries`` are model calls beyond each invocation's first;
    ``refused`` invocations were not sent by the call policy (budget, open circuit, dry run) and
    their prompt tokens are estimated from the rendered prompt.
    """

    calls: int = 0
    cache_hits: int = 0
    failures: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    refused: int = 0


class JudgeAccounting:
    """Thread-safe usage counters keyed by judge role."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._usage: dict[str, RoleUsage] = {}
        self._by_judge: dict[str, RoleUsage] = {}  # the same counts per judge spec (for prices)

    def record(
        self,
        role: str,
        *,
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
        latency_s: float = 0.0,
        cache_hit: bool = False,
        failed: bool = False,
        retries: int = 0,
        refused: bool = False,
        judge: str | None = None,
    ) -> None:
        """Record one judge invocation of ``role`` (tokens summed over all its attempts).

        ``judge`` is the spec that answered, counted per spec too, for prices.
        """
        with self._lock:
            tables = [self._usage.setdefault(role, RoleUsage())]
            if judge is not None:
                tables.append(self._by_judge.setdefault(judge, RoleUsage()))
            for usage in tables:
                usage.calls += 1
                usage.cache_hits += int(cache_hit)
                usage.failures += int(failed)
                usage.retries += retries
                usage.prompt_tokens += prompt_tokens
                usage.completion_tokens += completion_tokens
                usage.latency_s += latency_s
                usage.refused += int(refused)

    def snapshot(self) -> dict[str, dict[str, float | int]]:
        """Return a copy of the counters, ``{role: {field: value}}``, roles sorted."""
        with self._lock:
            return {role: asdict(self._usage[role]) for role in sorted(self._usage)}

    def by_judge(self) -> dict[str, dict[str, float | int]]:
        """The same counters per judge spec, ``{spec: {field: value}}``."""
        with self._lock:
            return {spec: asdict(self._by_judge[spec]) for spec in sorted(self._by_judge)}

    def add(
        self,
        usage: Mapping[str, Mapping[str, float | int]],
        by_judge: Mapping[str, Mapping[str, float | int]],
    ) -> None:
        """Add counters another process recorded (:meth:`snapshot`, :meth:`by_judge`)."""
        with self._lock:
            for table, counts in ((self._usage, usage), (self._by_judge, by_judge)):
                for key, fields in counts.items():
                    total = table.setdefault(key, RoleUsage())
                    for name, value in fields.items():
                        setattr(total, name, getattr(total, name) + value)

    def reset(self) -> None:
        """Forget all counters."""
        with self._lock:
            self._usage.clear()
            self._by_judge.clear()


#: Process-wide accounting used by every LLM judge unless one is given explicitly.
ACCOUNTING = JudgeAccounting()
