"""The synthesis writer: the model that writes ProactiveEval data (paper 003, Listings 2-9).

One writer serves every writing stage of the pipeline: sub-topics for the topic tree (L2), an
environment per topic (L3), candidate targets (L4, sampled at high temperature), their ensemble
(L5), the obfuscation rewrite (L6-L7) and noise injection (L8-L9). Each call returns a
:class:`~nodes.judges.result.JudgeResult`: the value, or None with the reason, and who wrote it.

``blueprint`` is what a template-based writer knows about the scenario it wrote (its intended
target, the concrete rewrite of its facts); an LLM writer has none and ignores it.

* ``local`` - :class:`~.local.LocalSynthesisWriter`: templates over todeval's own topic tree,
  a stand-in that exercises the pipeline offline (see its module).
* ``<provider>:<model>`` - Listings 2-9 verbatim (:class:`~.llm.LLMSynthesisWriter`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from todeval.evals.proactive_schema import Environment, TargetPlan
from todeval.nodes.judges.result import JudgeResult

Blueprint = Mapping[str, Any]


@dataclass(frozen=True)
class Draft:
    """A written environment and, from a template writer, its blueprint."""

    environment: Environment
    blueprint: dict[str, Any] | None = None


@dataclass(frozen=True)
class Ensembled:
    """The target ensemble's answer (Listing 5)."""

    plan: TargetPlan
    analysis: str


class SynthesisWriter(Protocol):
    """Anything that writes the pipeline's data."""

    name: str

    def sub_topics(self, domain: str, parent: str, n: int) -> JudgeResult[list[str]]:
        """Up to ``n`` sub-topics of ``parent`` (the domain itself at the root) (Listing 2)."""
        ...

    def environment(self, domain: str, topic: Sequence[str], seed: int) -> JudgeResult[Draft]:
        """One environment for the topic path ``topic`` (root to leaf) (Listing 3)."""
        ...

    def targets(
        self,
        domain: str,
        environment: Environment,
        blueprint: Blueprint | None,
        n: int,
        seed: int,
    ) -> JudgeResult[list[TargetPlan]]:
        """``n`` candidate targets, sampled independently (Listing 4)."""
        ...

    def ensemble(
        self, domain: str, environment: Environment, candidates: Sequence[TargetPlan]
    ) -> JudgeResult[Ensembled]:
        """The candidates synthesised into the reference target (Listing 5)."""
        ...

    def obfuscate(
        self, domain: str, environment: Environment, target: str, blueprint: Blueprint | None
    ) -> JudgeResult[Environment]:
        """Both fields rewritten as concrete, observable behaviour (Listings 6-7)."""
        ...

    def inject_noise(
        self, domain: str, environment: Environment, target: str, seed: int
    ) -> JudgeResult[Environment]:
        """Both fields with 3-4 plausible, irrelevant sentences around the original (L8-9)."""
        ...
