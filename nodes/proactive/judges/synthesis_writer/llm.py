"""The LLM synthesis writer: Listings 2-9 verbatim, each through :class:`LLMJudge`.

Candidate targets (Listing 4) are sampled at the run's high temperature and never cached (five
identical prompts must give five samples); every other stage runs at temperature 0 and is
cached. Listings 6-9 ask for plain text ("Output: ..."): a todeval system message asks for it
wrapped in JSON so it can be parsed and retried like every other answer.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from todeval.evals.proactive_schema import Environment, TargetPlan
from todeval.nodes.judges.llm import LLMJudge
from todeval.nodes.judges.result import JudgeResult
from todeval.nodes.judges.roles import JudgeRole
from todeval.nodes.judges.spec import JudgeSpec
from todeval.nodes.proactive.judges.synthesis_writer import Blueprint, Draft, Ensembled
from todeval.nodes.proactive.text import render_environment
from todeval.nodes.prompts.proactive import (
    ENVIRONMENT_EXAMPLES,
    ENVIRONMENT_PROMPT,
    NOISE_TRIGGER_EXAMPLE,
    NOISE_TRIGGER_FACTOR_PROMPT,
    NOISE_USER_EXAMPLE,
    NOISE_USER_INFORMATION_PROMPT,
    OBFUSCATE_TRIGGER_FACTOR_PROMPT,
    OBFUSCATE_USER_INFORMATION_PROMPT,
    OBFUSCATION_DOMAIN_RULES,
    OBFUSCATION_TRIGGER_EXAMPLE,
    OBFUSCATION_USER_EXAMPLE,
    REWRITE_SYSTEM_PROMPT,
    TARGET_ENSEMBLE_PROMPT,
    TARGET_EXAMPLES,
    TARGET_GENERATION_PROMPT,
    TOPIC_EXAMPLES,
    TOPIC_TREE_PROMPT,
    domain_description,
)

_FALLBACK = "recommendation"  # examples for a domain todeval has none for


class TopicsOutput(BaseModel):
    """Listing 2's JSON."""

    parent_topic: str = Field(default="", description="The parent topic.")
    topics: list[str] = Field(description="The sub-topics.")


class TargetOutput(BaseModel):
    """Listing 4's JSON ({"Target", "sub-target"}); Listing 5's adds the analysis."""

    model_config = ConfigDict(populate_by_name=True)

    analyze_process: str = Field(default="", description="Listing 5's analysis (L4: none).")
    target: str = Field(
        validation_alias=AliasChoices("Target", "target"), description="The target."
    )
    sub_target: list[str] = Field(
        validation_alias=AliasChoices("sub-target", "sub_target", "sub_targets", "sub-targets"),
        description="The sub-targets.",
    )

    def plan(self) -> TargetPlan:
        """The answer as a plan."""
        return TargetPlan(
            target=self.target.strip(), sub_target=[s.strip() for s in self.sub_target]
        )


class RewriteOutput(BaseModel):
    """Listings 6-9's "Output: ..." string, wrapped in JSON (see the module docstring)."""

    output: str = Field(description="The rewritten text, starting with 'Output: '.")

    def text(self) -> str:
        """The text without its ``Output:`` prefix."""
        value = self.output.strip()
        return value[len("output:") :].strip() if value.lower().startswith("output:") else value


class LLMSynthesisWriter:
    """Listings 2-9 through one LLM spec (the paper: GPT-4o)."""

    def __init__(
        self,
        role: JudgeRole[Any],
        spec: JudgeSpec | str,
        *,
        temperature: float = 1.0,
        max_retries: int = 3,
        **llm_kwargs: Any,
    ) -> None:
        def judge(prompt: str, output: type[BaseModel], **extra: Any) -> LLMJudge[Any]:
            return LLMJudge(
                role=role.name, spec=spec, prompt=prompt, output_model=output,
                max_retries=max_retries, **(llm_kwargs | extra),
            )  # fmt: skip

        self._topics = judge(TOPIC_TREE_PROMPT, TopicsOutput)
        self._environment = judge(ENVIRONMENT_PROMPT, Environment)
        self._candidate = judge(
            TARGET_GENERATION_PROMPT, TargetOutput, temperature=temperature, cache=None
        )
        self._ensemble = judge(TARGET_ENSEMBLE_PROMPT, TargetOutput)
        rewrite: dict[str, Any] = {"system": REWRITE_SYSTEM_PROMPT}
        self._obfuscate_user = judge(OBFUSCATE_USER_INFORMATION_PROMPT, RewriteOutput, **rewrite)
        self._obfuscate_trigger = judge(OBFUSCATE_TRIGGER_FACTOR_PROMPT, RewriteOutput, **rewrite)
        self._noise_user = judge(NOISE_USER_INFORMATION_PROMPT, RewriteOutput, **rewrite)
        self._noise_trigger = judge(NOISE_TRIGGER_FACTOR_PROMPT, RewriteOutput, **rewrite)
        self.name = self._topics.spec.raw

    def sub_topics(self, domain: str, parent: str, n: int) -> JudgeResult[list[str]]:
        """Listing 2 for ``parent``."""
        result = self._topics.invoke(
            {
                "n": n,
                "topic": parent.replace("_", " "),
                "Examples": _examples(TOPIC_EXAMPLES, domain),
            }
        )
        topics = [t.strip() for t in result.value.topics if t.strip()] if result.value else None
        return JudgeResult(topics[:n] if topics else None, self.name, result.reason)

    def environment(self, domain: str, topic: Sequence[str], seed: int) -> JudgeResult[Draft]:
        """Listing 3; the topic path goes into the description (the Listing has no topic slot)."""
        description = f"{domain_description(domain)} The topic is {' > '.join(topic)}."
        result = self._environment.invoke(
            {"description": description, "Examples": _examples(ENVIRONMENT_EXAMPLES, domain)}
        )
        value = Draft(result.value) if isinstance(result.value, Environment) else None
        return JudgeResult(value, self.name, result.reason)

    def targets(
        self, domain: str, environment: Environment, blueprint: Blueprint | None, n: int, seed: int
    ) -> JudgeResult[list[TargetPlan]]:
        """Listing 4, ``n`` independent samples; failed samples are dropped (None if all fail)."""
        variables = {
            "description": domain_description(domain),
            "example": _examples(TARGET_EXAMPLES, domain),
            "environment": render_environment(environment),
        }
        plans, reasons = [], []
        for _ in range(n):
            result = self._candidate.invoke(variables)
            if isinstance(result.value, TargetOutput):
                plans.append(result.value.plan())
            else:
                reasons.append(result.reason or "no answer")
        return JudgeResult(plans or None, self.name, "; ".join(reasons) or None)

    def ensemble(
        self, domain: str, environment: Environment, candidates: Sequence[TargetPlan]
    ) -> JudgeResult[Ensembled]:
        """Listing 5 over the numbered candidates."""
        targets = "\n".join(
            f"Target {i}: {c.target}\nSub-targets: {json.dumps(c.sub_target, ensure_ascii=False)}"
            for i, c in enumerate(candidates, start=1)
        )
        result = self._ensemble.invoke(
            {
                "description": domain_description(domain),
                "environment": render_environment(environment),
                "targets": targets,
            }
        )
        if not isinstance(result.value, TargetOutput):
            return JudgeResult(None, self.name, result.reason)
        return JudgeResult(Ensembled(result.value.plan(), result.value.analyze_process), self.name)

    def obfuscate(
        self, domain: str, environment: Environment, target: str, blueprint: Blueprint | None
    ) -> JudgeResult[Environment]:
        """Listings 6 and 7, one call per field."""
        rule = OBFUSCATION_DOMAIN_RULES.get(domain, "")
        user = self._obfuscate_user.invoke(
            {"Domain_Rule": rule, "Examples": OBFUSCATION_USER_EXAMPLE,
             "user_information": environment.user_information}
        )  # fmt: skip
        trigger = self._obfuscate_trigger.invoke(
            {"domain_rule": rule, "example": OBFUSCATION_TRIGGER_EXAMPLE,
             "trigger_factor": environment.trigger_factor, "target": target}
        )  # fmt: skip
        return self._both(user, trigger)

    def inject_noise(
        self, domain: str, environment: Environment, target: str, seed: int
    ) -> JudgeResult[Environment]:
        """Listings 8 and 9, one call per field."""
        user = self._noise_user.invoke(
            {"example": NOISE_USER_EXAMPLE, "user_information": environment.user_information}
        )
        trigger = self._noise_trigger.invoke(
            {"example": NOISE_TRIGGER_EXAMPLE, "trigger_factor": environment.trigger_factor,
             "target": target}
        )  # fmt: skip
        return self._both(user, trigger)

    def _both(self, user: JudgeResult[Any], trigger: JudgeResult[Any]) -> JudgeResult[Environment]:
        if not isinstance(user.value, RewriteOutput) or not isinstance(
            trigger.value, RewriteOutput
        ):
            return JudgeResult(None, self.name, user.reason or trigger.reason)
        rewritten = Environment(
            user_information=user.value.text(), trigger_factor=trigger.value.text()
        )
        return JudgeResult(rewritten, self.name)


def _examples(table: dict[str, str], domain: str) -> str:
    return table.get(domain, table[_FALLBACK])
