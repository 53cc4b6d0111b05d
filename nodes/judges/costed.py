"""LLM judges that report what each call cost, for subsystems that report cost per turn.

The usage still reaches the shared :data:`~nodes.judges.accounting.ACCOUNTING`.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Generic, Literal, TypeVar

from pydantic import BaseModel

from todeval.nodes.judges.accounting import ACCOUNTING, JudgeAccounting
from todeval.nodes.judges.llm import LLMJudge
from todeval.nodes.judges.spec import JudgeSpec
from todeval.stores.llm_cache import LLMCache

OutT = TypeVar("OutT", bound=BaseModel)


@dataclass(frozen=True)
class CallRecord:
    """Usage and outcome of one judge invocation, over all its attempts.

    ``llm_calls`` is 0 for a cache hit; ``reason`` says why there is no answer.
    """

    role: str
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cache_hit: bool = False
    reason: str | None = None

    def cost(self) -> dict[str, int]:
        """The fields of the tracker's cost records (``llm_calls`` and the two token counts)."""
        return {
            "llm_calls": self.llm_calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
        }


class _UsageTap(JudgeAccounting):
    """Accounting that forwards every record and keeps the calling thread's last one."""

    def __init__(self, inner: JudgeAccounting) -> None:
        super().__init__()
        self.inner = inner
        self.local = threading.local()

    def record(self, role: str, **usage: Any) -> None:
        """Forward to the shared accounting; keep the invocation as this thread's last."""
        self.inner.record(role, **usage)
        hit = bool(usage.get("cache_hit", False))
        tokens = int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0))
        calls = 0 if hit else int(usage.get("retries", 0)) + 1
        self.local.last = CallRecord(role, calls, *tokens, cache_hit=hit)

    def snapshot(self) -> dict[str, dict[str, float | int]]:
        return self.inner.snapshot()

    def reset(self) -> None:
        self.inner.reset()


class CostedJudge(Generic[OutT]):
    """An :class:`LLMJudge` that keeps each call's cost (subclasses set ``system_prompt``)."""

    system_prompt: ClassVar[str | None] = None
    """The system message every call of this judge starts with."""

    def __init__(
        self,
        role: str,
        spec: str | JudgeSpec,
        prompt: str,
        output_model: type[OutT],
        *,
        max_retries: int = 3,
        cache: LLMCache | None | Literal["default"] = "default",
        accounting: JudgeAccounting | None = None,
    ) -> None:
        self._tap = _UsageTap(accounting if accounting is not None else ACCOUNTING)
        self.llm = LLMJudge(
            role=role,
            spec=spec,
            prompt=prompt,
            output_model=output_model,
            system=self.system_prompt,
            max_retries=max_retries,
            cache=cache,
            accounting=self._tap,
        )
        self.name = self.llm.spec.raw

    @property
    def last(self) -> CallRecord:
        """This thread's last invocation (sync methods only; a skipped call costs nothing)."""
        record: CallRecord = getattr(self._tap.local, "last", CallRecord(self.llm.role))
        return record

    def ask(self, variables: Mapping[str, Any]) -> tuple[OutT | None, CallRecord]:
        """Invoke the judge; the answer (None on failure) and the call's record."""
        result = self.llm.invoke(variables)
        record = replace(self.last, reason=None if result.ok else result.reason)
        self._tap.local.last = record
        return result.value, record

    def skip(self) -> None:
        """Record that no call was needed (the next :attr:`last` costs nothing)."""
        self._tap.local.last = CallRecord(self.llm.role)
