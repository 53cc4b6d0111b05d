"""State of the ATOD synthesis graph: one synthetic dialogue per thread (paper 000, §4)."""

from __future__ import annotations

from typing import Any

from typing_extensions import TypedDict


class AtodSynthesisInput(TypedDict):
    """What one synthetic dialogue is drawn from: its id, seed and complexity stratum."""

    dialogue_id: str
    seed: int
    complexity_class: str


class AtodSynthesisOutput(TypedDict):
    """The accepted dialogue, or None, and every rejected attempt.

    The dialogue follows Listings 1-2 with ``complexity_class``; an attempt is
    ``{"attempt", "stage", "reason"}``.
    """

    dialogue_id: str
    dialogue: dict[str, Any] | None
    rejections: list[dict[str, Any]]


class AtodSynthesisState(AtodSynthesisInput, AtodSynthesisOutput, total=False):
    """Everything the pipeline's nodes read and write."""

    attempt: int
    trajectory: list[list[str]]
    annotation: dict[str, Any] | None
    draft: dict[str, Any] | None
    record: dict[str, Any] | None
    failure: dict[str, Any] | None
