"""A local reference agent for both ProactiveEval tasks, so that the tasks run offline.

Use it as ``python:todeval.nodes.proactive.reference_agent:plan`` (target planning) and
``python:todeval.nodes.proactive.reference_agent:guide`` (dialogue guidance). It is a floor to
compare real agents with, not a model of one: it reads only what the paper gives the agent
under test.

* ``plan`` reads Listing 4's ``<Environment>`` JSON and the domain description and writes the
  plan a careful reader would (:mod:`nodes.proactive.reference_planner`): the domain's proactive
  action on the environment's key phrases as the target, and 3-4 sub-targets that are the
  conversation's steps towards it, each an action, none a copied fragment.
* ``guide`` reads the environment and the reference plan from its system prompt, sees only the
  turns in its memory window, and raises the sub-targets one per message in order; when the user
  pushes back it raises the same one again with a reason drawn from the user information.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from todeval.evals.proactive_schema import Environment, TargetPlan
from todeval.nodes.judges.parsing import json_candidates
from todeval.nodes.proactive.judges.target_reached import agrees
from todeval.nodes.proactive.reference_planner import plan_target
from todeval.nodes.proactive.text import raised_sub_targets, sub_target_shares, words
from todeval.nodes.prompts.proactive import DOMAIN_DESCRIPTIONS

_BLOCK = "<{tag}>\n(.*?)\n</{tag}>"
FRAGMENT_WORDS = 12


def plan(messages: Sequence[Mapping[str, Any]], tools: Sequence[Any]) -> str:
    """Listing 4's answer: ``{"Target": ..., "sub-target": [...]}`` as JSON text."""
    prompt = str(messages[-1].get("content", "")) if messages else ""
    environment = Environment.model_validate(_json_block(prompt, "Environment"))
    domain = next(
        (name for name, text in DOMAIN_DESCRIPTIONS.items() if text in prompt), "recommendation"
    )
    planned = plan_target(domain, environment)
    return json.dumps({"Target": planned.target, "sub-target": planned.sub_target})


def guide(messages: Sequence[Mapping[str, Any]], tools: Sequence[Any], policy: str) -> str:
    """The next message: the next sub-target, or the same one again after a push-back."""
    environment = Environment.model_validate(_json_block(policy, "Environment"))
    reference = TargetPlan.model_validate(_json_block(policy, "Target"))
    steps = reference.sub_target or [reference.target]
    said = [str(m.get("content", "")) for m in messages if m.get("role") == "assistant"]
    if not said:
        opening = _fragment(environment.trigger_factor, FRAGMENT_WORDS)
        return f"Hi! I noticed {opening}. {_ask(steps[0])}"
    last = max((_step_of(steps, text) for text in said), default=-1)
    user = next(str(m.get("content", "")) for m in reversed(messages) if m.get("role") == "user")
    if last >= 0 and not agrees(user):
        reason = _fragment(environment.user_information, FRAGMENT_WORDS)
        return f"I hear you. Since {reason}, it could really help: {_said(steps[last])}."
    step = min(last + 1, len(steps) - 1)
    return _ask(steps[step])


def _step_of(steps: Sequence[str], message: str) -> int:
    """The sub-target a message of its own was about: the best-covered raised one (else -1)."""
    shares = sub_target_shares(steps, message)
    raised = raised_sub_targets(steps, message)
    return max(raised, key=lambda i: (shares[i] or 0.0, -i), default=-1)


def _ask(step: str) -> str:
    return f"Would you be up for this: {_said(step)}?"


def _lower_first(text: str) -> str:
    text = text.strip().rstrip(".")
    return text[:1].lower() + text[1:]


#: Third person of the environments, as the agent says it to the user.
SECOND_PERSON = (
    (re.compile(r"\bthe user's\b", re.IGNORECASE), "your"),
    (re.compile(r"\bthe assistant's\b", re.IGNORECASE), "my"),
    (re.compile(r"\bthe user (is|was)\b", re.IGNORECASE), "you are"),
    (re.compile(r"\bthe user has\b", re.IGNORECASE), "you have"),
    (re.compile(r"\bthe user\b", re.IGNORECASE), "you"),
    (re.compile(r"\bthe assistant has\b", re.IGNORECASE), "I have"),
    (re.compile(r"\bthe assistant (is|was)\b", re.IGNORECASE), "I am"),
    (re.compile(r"\bthe assistant\b", re.IGNORECASE), "I"),
)


def _fragment(text: str, n: int) -> str:
    """The first ``n`` words of the text's first sentence, said to the user."""
    first = re.split(r"(?<=[.!?])\s+", text.strip())[0].rstrip(".!?")
    return _said(" ".join(first.split()[:n])) if words(first) else "your plans"


def _said(text: str) -> str:
    """The text in the second person, lower-cased at the start (but "I"), no final stop."""
    text = text.strip().rstrip(".")
    for pattern, replacement in SECOND_PERSON:
        text = pattern.sub(replacement, text)
    return text if text.startswith("I ") else _lower_first(text)


def _json_block(text: str, tag: str) -> dict[str, Any]:
    """The JSON object between ``<tag>`` lines (the prompts' layout)."""
    found = re.search(_BLOCK.format(tag=tag), text, re.DOTALL)
    candidates = json_candidates(found.group(1)) if found else []
    objects = [value for _, value in candidates if isinstance(value, dict)]
    if not objects:
        raise ValueError(f"no <{tag}> JSON block in the prompt")
    return objects[0]


#: The reference agent's specs: the offline default of ``todeval proactive plan|guide``.
PLAN_SPEC = "python:todeval.nodes.proactive.reference_agent:plan"
GUIDE_SPEC = "python:todeval.nodes.proactive.reference_agent:guide"
