"""Validity cards: how far each local judge's labels agree with labels people wrote.

Every local judge ships a card (``validity.json`` in its role package), written by ``make
validity`` from ``data/validation/``. A summary prints each figure's judge card. A card is
*weak* when, on some human-labelled set, kappa is below :data:`WEAK_KAPPA` or failure recall
is below :data:`WEAK_RECALL`. An LLM judge has no card.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, SerializerFunctionWrapHandler, model_serializer

from todeval.nodes.judges.local import resolve_local_variant
from todeval.stores.paths import PROJECT_ROOT

WEAK_KAPPA = 0.15
"""Below this Cohen's kappa against people, a judge's figures are flagged as weak."""

WEAK_RECALL = 0.30
"""Below this recall of the failures people marked, a failure detector is flagged as weak."""


class ValidityCheck(BaseModel):
    """One labelled set a judge was checked on, and how it did there."""

    data: str = Field(description="The labelled set (a repository path or a named held-out set).")
    labelled_by: str = Field(description="Who labelled it: 'people (todeval team)', 'SGD acts'…")
    n: int = Field(description="Items checked (turns, boundaries, goals).")
    kappa: float | None = Field(default=None, description="Cohen's kappa against the labels.")
    precision: float | None = Field(
        default=None, description="Precision of the positive class (failed turn, new goal)."
    )
    recall: float | None = Field(default=None, description="Recall of the positive class.")
    f1: float | None = Field(default=None, description="F1 of the positive class.")
    coverage: float | None = Field(
        default=None, description="Share of items the judge labelled (the rest it abstained on)."
    )
    human: bool = Field(description="True when people wrote the labels (what weakness reads).")
    note: str = Field(default="", description="Anything a reader should know about this check.")
    spearman: float | None = Field(
        default=None,
        description="Spearman's rho of a per-item figure with a graded reference (e.g. a "
        "conversation's GSR share with a recorded run's reward); left out when not measured.",
    )
    auc: float | None = Field(
        default=None,
        description="AUC of that figure for the reference's positive items; left out when not "
        "measured.",
    )

    @model_serializer(mode="wrap")
    def _measured_only(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        for key in ("spearman", "auc"):
            if isinstance(data, dict) and data.get(key) is None:
                data.pop(key, None)
        return data


class ValidityCard(BaseModel):
    """A local judge's card: what it was trained on and how it agrees with labels."""

    role: str = Field(description="The judge role (``turn_quality``, ``segmentation``...).")
    judge: str = Field(description="The judge's spec (``local:turn``...).")
    trained_on: str = Field(description="The data the judge learned from, with its license.")
    positive: str = Field(description="What the precision/recall figures count (e.g. failure).")
    checks: list[ValidityCheck] = Field(description="Every labelled set it was checked on.")
    model_files: dict[str, str] = Field(
        default_factory=dict,
        description="SHA-256 of every file the judge loads (weights, calibration), by repository "
        "path: a model retrained without a new card fails tests/unit/test_validity_cards.py.",
    )
    slice_checks: list[ValidityCheck] = Field(
        default_factory=list,
        description="The same checks on a fixed slice of each set too large to recompute in a "
        "test (its first items, named in ``data``); tests/unit/test_validity_cards.py recomputes "
        "them. Not validity figures: the summary leaves them out.",
    )

    @property
    def weak(self) -> bool:
        """Below :data:`WEAK_KAPPA` or :data:`WEAK_RECALL` on some human-labelled set."""
        for check in self.checks:
            if not check.human:
                continue
            if check.kappa is not None and check.kappa < WEAK_KAPPA:
                return True
            if check.recall is not None and check.recall < WEAK_RECALL:
                return True
        return False

    def summary(self) -> dict[str, object]:
        """The card as ``summary.json`` prints it beside a figure."""
        return self.model_dump(exclude={"slice_checks"}) | {"weak": self.weak}


def file_hashes(paths: Iterable[Path]) -> dict[str, str]:
    """A card's ``model_files``: each file's repository path -> the SHA-256 of its bytes."""
    hashes = {}
    for path in paths:
        full = path.resolve()
        name = full.relative_to(PROJECT_ROOT) if full.is_relative_to(PROJECT_ROOT) else full
        hashes[str(name)] = hashlib.sha256(full.read_bytes()).hexdigest()
    return hashes


def write_cards(path: Path, cards: list[ValidityCard]) -> None:
    """Write a role package's ``validity.json`` (cards keyed by judge spec)."""
    payload = {
        card.judge: card.model_dump(exclude=None if card.slice_checks else {"slice_checks"})
        for card in cards
    }
    path.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


@cache
def read_cards(path: Path) -> dict[str, ValidityCard]:
    """A role package's cards by judge spec (empty when it has none yet)."""
    if not path.exists():
        return {}
    raw = json.loads(path.read_text(encoding="utf-8"))
    return {spec: ValidityCard.model_validate(card) for spec, card in raw.items()}


_CARD_FILES: dict[str, Path] = {}


def register_cards(role: str, path: Path) -> None:
    """Say where ``role``'s cards live (its package's ``validity.json``); done on import."""
    _CARD_FILES[role] = path


def card_for(role: str, spec: str) -> ValidityCard | None:
    """The card of the judge ``spec`` names for ``role``; None for an LLM or an unchecked judge.

    A panel of local teachers has its vote's card as ``vote:<spec>,<spec>,...``.
    """
    path = _CARD_FILES.get(role)
    if path is None or not spec.startswith(("local", "vote:local")):
        return None
    cards = read_cards(path)
    if spec in cards:
        return cards[spec]
    variant = resolve_local_variant(role, spec.partition(":")[2] or None)
    return cards.get(f"local:{variant}")
