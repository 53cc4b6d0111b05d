"""What every judge returns: a value (or None) and the judge that produced it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class JudgeResult(Generic[T]):
    """One judgement, labelled with the judge spec that made it.

    ``value`` is None when the judge could not judge (never a guess); ``reason`` then says why,
    else it is a short rationale.
    """

    value: T | None
    judge: str
    reason: str | None = None

    @property
    def ok(self) -> bool:
        """Whether the judge produced a value."""
        return self.value is not None
