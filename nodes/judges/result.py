"""What every judge returns: a value (or None) and the judge that produced it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class JudgeResult(Generic[T]):
    """One judgement, labelled with the judge that made it.

    Attributes:
        value: The judgement, or None when the judge could not judge (never a guess).
        judge: The spec that produced it (e.g. ``"local"``, ``"openai:gpt-4o-mini"``);
            stored with every label so results say who decided.
        reason: Why ``value`` is None, or a short rationale when it is set.
    """

    value: T | None
    judge: str
    reason: str | None = None

    @property
    def ok(self) -> bool:
        """Whether the judge produced a value."""
        return self.value is not None
