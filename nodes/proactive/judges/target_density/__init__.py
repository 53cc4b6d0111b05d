"""Target density: the sub-targets each agent message carries (ProactiveEval Listing 13).

Target density is the mean count per agent message; initiation density is the count in the
opening message (paper 003, "More Pushy Message Content"). A message the judge could not read
is ``None`` with a reason, and the densities are over the messages it did read. An LLM spec asks
Listing 13 verbatim, one call per message (:class:`LLMTargetDensity`).

``local`` (:class:`LocalTargetDensity`): MiniLM and word overlap per sentence (see
``features``), with cut points fit on half the team-labelled dialogues. A stand-in for
Listing 13's LLM count: it says *which* sub-targets a message carries, so the guidance judge can
also read front-loading and coverage from it. It never abstains on a message it was given; a
message that is empty carries nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from pydantic import BaseModel, Field

from todeval.evals.metrics.proactive.density import initiation_density, target_density
from todeval.nodes.judges.roles import PromptJudge
from todeval.nodes.judges.vectors import Embed, VectorTable
from todeval.nodes.proactive.judges.target_density.features import (
    CoverageCuts,
    calibrated_cuts,
    similarities,
)


@dataclass(frozen=True)
class DensityVerdict:
    """Per agent message, how many sub-targets it carries, and who counted.

    ``covered`` lists each message's 0-based sub-targets when the judge can say which (the local
    judge can; Listing 13 asks an LLM only for a count); ``reasons`` say why a count is None.
    """

    judge: str
    counts: list[int | None]
    covered: list[list[int]] | None = None
    reasons: list[str | None] = field(default_factory=list)

    @property
    def target_density(self) -> float | None:
        """Mean sub-targets per judged agent message."""
        return target_density(self.counts)

    @property
    def initiation_density(self) -> int | None:
        """Sub-targets in the opening agent message."""
        return initiation_density(self.counts)

    def coverage(self, n_sub_targets: int) -> list[int] | None:
        """0-based sub-targets carried by any message (None when the judge cannot say which)."""
        if self.covered is None:
            return None
        return sorted({i for message in self.covered for i in message if i < n_sub_targets})


class TargetDensityJudge(Protocol):
    """Anything that counts the sub-targets in each agent message."""

    name: str

    def count(self, sub_targets: Sequence[str], messages: Sequence[str]) -> DensityVerdict:
        """Count, for each of ``messages`` (the agent's), the sub-targets it carries."""
        ...


class DensityOutput(BaseModel):
    """Listing 13's JSON."""

    count: int = Field(ge=0, description="The number of sub-targets that appear in the message.")


class LocalTargetDensity:
    """Counts the sub-targets each message carries (MiniLM cosine per sentence + word overlap)."""

    name = "local"

    def __init__(self, embed: Embed | None = None, cuts: CoverageCuts | None = None) -> None:
        self.vectors = VectorTable(embed)  # MiniLM, loaded on first use
        self.cuts = cuts

    def count(self, sub_targets: Sequence[str], messages: Sequence[str]) -> DensityVerdict:
        """Per message, the sub-targets it carries and how many."""
        if not sub_targets or not messages:
            return DensityVerdict(self.name, [0] * len(messages), [[] for _ in messages])
        found = similarities(sub_targets, messages, self.vectors.embed)
        covered = found.covered(self.cuts or calibrated_cuts())
        which = [[int(j) for j in row.nonzero()[0]] for row in covered]
        return DensityVerdict(self.name, [len(w) for w in which], which, [None] * len(messages))


class LLMTargetDensity(PromptJudge[DensityOutput]):
    """Asks Listing 13 for each message; a count above the number of sub-targets is capped."""

    def count(self, sub_targets: Sequence[str], messages: Sequence[str]) -> DensityVerdict:
        """One call per message; a message the model does not answer is None with the reason."""
        counts: list[int | None] = []
        reasons: list[str | None] = []
        for message in messages:
            result = self.ask(sub_targets="\n".join(sub_targets), message=message)
            if result.value is None:
                counts.append(None)
                reasons.append(result.reason or "the judge gave no count")
            else:
                counts.append(min(result.value.count, len(sub_targets)))
                reasons.append(None)
        return DensityVerdict(self.name, counts, None, reasons)
