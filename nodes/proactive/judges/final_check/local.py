"""Local final-check members: each checks one stated rule, none reads "best".

They stand in for the paper's five LLMs and can only reject references that break a rule the
paper states:

* ``local:grounded`` - Listing 7 rule 4: the trigger keeps the target's key entities; yes when
  at least half the target's content words occur in the environment;
* ``local:format`` - Listing 4: target under 10 words, 2-4 sub-targets each under 10 words;
* ``local:domain-action`` - Listing 1: the target opens with an action the domain asks for
  (recommend, persuade, clarify, follow up, help...); None for a domain todeval does not know.
"""

from __future__ import annotations

from todeval.evals.proactive_schema import Environment, TargetPlan
from todeval.nodes.judges.local import register_local_judge
from todeval.nodes.judges.result import JudgeResult
from todeval.nodes.proactive.judges.final_check.role import ROLE
from todeval.nodes.proactive.judges.target_planning_judge.features import format_problems
from todeval.nodes.proactive.text import DOMAIN_ACTIONS, content_stems, stem, words

GROUNDED_SHARE = 0.5


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


@register_local_judge(ROLE, "grounded", default=True)
def _grounded() -> GroundedCheck:
    return GroundedCheck()


@register_local_judge(ROLE, "format")
def _format() -> FormatCheck:
    return FormatCheck()


@register_local_judge(ROLE, "domain-action")
def _domain_action() -> DomainActionCheck:
    return DomainActionCheck()
