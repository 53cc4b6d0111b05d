"""ProactiveEval floor agents: agents that do nothing useful, for both tasks (issue 29).

A ProactiveEval score that tracks the agent gives each of them at most 3 of 10. Use them as
``python:todeval.nodes.proactive.floor_agents:<function>`` (the specs are
:data:`GUIDE_FLOOR_SPECS` and :data:`PLAN_FLOOR_SPECS`); they take the same arguments as the
reference agent (:mod:`nodes.proactive.reference_agent`) and read only what the harness gives
the agent under test.

Dialogue guidance (``todeval proactive guide``):

* ``recite``: the reference plan's sub-targets, word for word, every turn, whatever the user
  says (a refusal included). Plan lines read out put nothing to the user
  (:func:`~nodes.proactive.text.reads_out`): the local user is puzzled and never accepts.
* ``empty``: an empty message (the harness ends the dialogue there: the agent gave nothing).
* ``one_word``: :data:`ONE_WORD` every turn.

Target planning (``todeval proactive plan``):

* ``plan_nothing``: an empty target and no sub-targets.
* ``copy_environment``: the environment text as the target, its two fields as the sub-targets.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from todeval.evals.proactive_schema import Environment, TargetPlan

ONE_WORD = "Okay."
_BLOCK = "<{tag}>\n(.*?)\n</{tag}>"
_MODULE = "python:todeval.nodes.proactive.floor_agents"


def recite(messages: Sequence[Mapping[str, Any]], tools: Sequence[Any], policy: str) -> str:
    """Every reference sub-target, word for word, in one message (the user is not read)."""
    reference = TargetPlan.model_validate(block(policy, "Target"))
    steps = reference.sub_target or [reference.target]
    return " ".join(step.strip() for step in steps)


def empty(messages: Sequence[Mapping[str, Any]], tools: Sequence[Any]) -> str:
    """Nothing at all."""
    return ""


def one_word(messages: Sequence[Mapping[str, Any]], tools: Sequence[Any]) -> str:
    """One word, whatever was said."""
    return ONE_WORD


def plan_nothing(messages: Sequence[Mapping[str, Any]], tools: Sequence[Any]) -> str:
    """Listing 4's answer with an empty target and no sub-targets."""
    return json.dumps({"Target": "", "sub-target": []})


def copy_environment(messages: Sequence[Mapping[str, Any]], tools: Sequence[Any]) -> str:
    """Listing 4's answer copied from the environment (its text; its fields as sub-targets)."""
    prompt = str(messages[-1].get("content", "")) if messages else ""
    environment = Environment.model_validate(block(prompt, "Environment"))
    text = f"{environment.user_information} {environment.trigger_factor}"
    return json.dumps(
        {"Target": text, "sub-target": [environment.user_information, environment.trigger_factor]}
    )


def block(text: str, tag: str) -> dict[str, Any]:
    """The JSON object between the ``<tag>`` lines of a prompt (the harness's layout).

    Raises:
        ValueError: No such block, or it holds no JSON object.
    """
    found = re.search(_BLOCK.format(tag=tag), text, re.DOTALL)
    value = json.loads(found.group(1)) if found else None
    if not isinstance(value, dict):
        raise ValueError(f"no <{tag}> JSON object in the prompt")
    return value


#: Dialogue-guidance floor agents by short name: their ``todeval proactive guide`` specs.
GUIDE_FLOOR_SPECS = {
    "recite": f"{_MODULE}:recite",
    "empty": f"{_MODULE}:empty",
    "one_word": f"{_MODULE}:one_word",
}
#: Target-planning floor agents by short name: their ``todeval proactive plan`` specs.
PLAN_FLOOR_SPECS = {
    "plan_nothing": f"{_MODULE}:plan_nothing",
    "copy_environment": f"{_MODULE}:copy_environment",
}
