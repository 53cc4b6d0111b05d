"""The final check (Listing 10): is the reference the best target for its environment?

Before an item enters the dataset, a panel judges its reference; the item is kept when a
majority says it is the best target (the paper: five leading LLMs). A member that cannot judge
returns None with the reason and does not count toward the majority's denominator. An LLM
member asks Listing 10 verbatim (:class:`LLMFinalCheck`, one call per reference).

The local members each check one stated rule; none reads "best". They stand in for the paper's
five LLMs and can only reject references that break a rule the paper states:

* ``local:grounded`` - Listing 7 rule 4: the trigger keeps the target's key entities; yes when
  at least half the target's content words occur in the environment;
* ``local:format`` - Listing 4: target under 10 words, 2-4 sub-targets each under 10 words;
* ``local:domain-action`` - Listing 1: the target opens with an action the domain asks for
  (recommend, persuade, clarify, follow up, help...); None for a domain todeval does not know.
"""

from __future__ import annotations

import json
from typing import Any, Protocol

from pydantic import BaseModel, Field, field_validator

from todeval.evals.proactive_schema import Environment, TargetPlan
from todeval.nodes.judges.result import JudgeResult
from todeval.nodes.judges.roles import PromptJudge
from todeval.nodes.proactive.judges.target_planning_judge.features import format_problems
from todeval.nodes.proactive.text import (
    DOMAIN_ACTIONS,
    content_stems,
    render_environment,
    stem,
    words,
)
from todeval.nodes.prompts.proactive import domain_description

GROUNDED_SHARE = 0.5


class FinalCheck(Protocol):
    """Anything that says whether the reference is the environment's best target."""

    name: str

    def check(
        self, domain: str, environment: Environment, reference: TargetPlan
    ) -> JudgeResult[bool]:
        """True when ``reference`` is the best target (the reason says why)."""
        ...


class FinalCheckOutput(BaseModel):
    """Listing 10's JSON (``"judge": "True"/"False"``, or a JSON boolean)."""

    reason: str = Field(default="", description="The reasoning, in 2-3 sentences.")
    judge: bool = Field(description="Whether the target is the best target.")

    @field_validator("judge", mode="before")
    @classmethod
    def _word(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip().lower() in {"true", "false"}:
            return value.strip().lower() == "true"
        return value


class GroundedCheck:
    """The environment contains at least half the target's content words."""

    name = "local:grounded"

    def check(
        self, domain: str, environment: Environment, reference: TargetPlan
    ) -> JudgeResult[bool]:
        """See the module docstring."""
        verbs = {stem(v) for v in DOMAIN_ACTIONS.get(domain, ())}
        wanted = content_stems(reference.target) - verbs
        if not wanted:
            return JudgeResult(None, self.name, "the target has no content words to look for")
        found = wanted & content_stems(
            f"{environment.user_information} {environment.trigger_factor}"
        )
        share = len(found) / len(wanted)
        return JudgeResult(
            share >= GROUNDED_SHARE,
            self.name,
            f"{share:.0%} of the target's words are in the environment",
        )


class FormatCheck:
    """Listing 4's format rules."""

    name = "local:format"

    def check(
        self, domain: str, environment: Environment, reference: TargetPlan
    ) -> JudgeResult[bool]:
        """See the module docstring."""
        problems = format_problems(reference)
        return JudgeResult(
            not problems, self.name, "; ".join(problems) or "keeps Listing 4's format"
        )


class DomainActionCheck:
    """The target opens with one of the domain's actions."""

    name = "local:domain-action"

    def check(
        self, domain: str, environment: Environment, reference: TargetPlan
    ) -> JudgeResult[bool]:
        """See the module docstring."""
        actions = DOMAIN_ACTIONS.get(domain)
        if actions is None:
            return JudgeResult(None, self.name, f"no action list for domain {domain!r}")
        first = (words(reference.target) or [""])[0]
        ok = first in actions
        return JudgeResult(
            ok,
            self.name,
            f"opens with {first!r}" + ("" if ok else f"; expected one of {', '.join(actions)}"),
        )


class LLMFinalCheck(PromptJudge[FinalCheckOutput]):
    """One call per reference."""

    def check(
        self, domain: str, environment: Environment, reference: TargetPlan
    ) -> JudgeResult[bool]:
        """No answer is None with the reason."""
        result = self.ask(
            description=domain_description(domain),
            environment=render_environment(environment),
            target=reference.target,
            sub_targets=json.dumps(reference.sub_target, ensure_ascii=False),
        )
        if result.value is None:
            return JudgeResult(None, self.name, result.reason)
        return JudgeResult(result.value.judge, self.name, result.value.reason.strip())
