"""A difficulty-panel reasoner: predicts an environment's target (paper 003, Refinement).

The paper lets three models of different scale each predict the target; an environment most of
them get right is easy and is refined. An LLM member predicts with Listing 4 at temperature 0
(:class:`LLMTargetPredictor`; the paper gives the reasoners no prompt of their own).

The local members are crude extractive predictors, meant to be fooled by what fools weak
models; each builds "<the domain's action> <content words>" from one place of the environment:
``local:lead`` the trigger factor's first contentful sentence (misled by injected noise),
``local:entity`` the entity the trigger and the user information repeat most, and
``local:salient`` the trigger sentence closest to the user information (the strongest).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Protocol

import numpy as np

from todeval.evals.proactive_schema import Environment, TargetPlan
from todeval.nodes.judges.result import JudgeResult
from todeval.nodes.judges.roles import PromptJudge
from todeval.nodes.judges.vectors import Embed, VectorTable
from todeval.nodes.proactive.judges.synthesis_writer.llm import TargetOutput
from todeval.nodes.proactive.text import (
    DOMAIN_ACTIONS,
    STOPWORDS,
    entities,
    render_environment,
    words,
)
from todeval.nodes.prompts.proactive import TARGET_EXAMPLES, domain_description

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9'\"])")
MAX_WORDS = 8
MIN_CONTENT = 4


class TargetPredictor(Protocol):
    """Anything that predicts the target of an environment."""

    name: str

    def predict(self, domain: str, environment: Environment) -> JudgeResult[TargetPlan]:
        """The predicted target (and sub-targets, where the predictor gives them)."""
        ...


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text) if s.strip()]


def _content(text: str) -> list[str]:
    return [w for w in words(text) if w not in STOPWORDS and len(w) > 2]


def _target(domain: str, text: str) -> TargetPlan:
    verb = (DOMAIN_ACTIONS.get(domain) or ("help",))[0].capitalize()
    return TargetPlan(target=" ".join([verb, *_content(text)[: MAX_WORDS - 1]]), sub_target=[])


class LeadPredictor:
    """The target from the trigger factor's first sentence."""

    name = "local:lead"

    def predict(self, domain: str, environment: Environment) -> JudgeResult[TargetPlan]:
        """See the module docstring."""
        sentences = _sentences(environment.trigger_factor) or [environment.trigger_factor]
        lead = next((s for s in sentences if len(_content(s)) >= MIN_CONTENT), sentences[0])
        return JudgeResult(_target(domain, lead), self.name)


class EntityPredictor:
    """The target from the entity the trigger and the user information repeat most."""

    name = "local:entity"

    def predict(self, domain: str, environment: Environment) -> JudgeResult[TargetPlan]:
        """See the module docstring; None when the trigger names no entity."""
        text = environment.trigger_factor
        found = entities(text)
        if not found:
            return JudgeResult(None, self.name, "the trigger factor names no specific entity")
        both = f"{text} {environment.user_information}".lower()
        counts = Counter({e: both.count(e) for e in found})
        best = max(sorted(found), key=lambda e: (counts[e], len(e)))
        return JudgeResult(_target(domain, best), self.name)


class SalientPredictor:
    """The target from the trigger sentence closest to the user information."""

    name = "local:salient"

    def __init__(self, embed: Embed | None = None) -> None:
        self.vectors = VectorTable(embed)  # MiniLM, loaded on first use

    def predict(self, domain: str, environment: Environment) -> JudgeResult[TargetPlan]:
        """See the module docstring."""
        sentences = _sentences(environment.trigger_factor) or [environment.trigger_factor]
        vectors = self.vectors.embed([environment.user_information, *sentences])
        best = int(np.argmax(vectors[1:] @ vectors[0]))
        return JudgeResult(_target(domain, sentences[best]), self.name)


class LLMTargetPredictor(PromptJudge[TargetOutput]):
    """Listing 4 at temperature 0, one call per environment."""

    def predict(self, domain: str, environment: Environment) -> JudgeResult[TargetPlan]:
        """One call; no answer is None with the reason."""
        result = self.ask(
            description=domain_description(domain),
            example=TARGET_EXAMPLES.get(domain, TARGET_EXAMPLES["recommendation"]),
            environment=render_environment(environment),
        )
        plan = result.value.plan() if result.value is not None else None
        return JudgeResult(plan, self.name, result.reason)
