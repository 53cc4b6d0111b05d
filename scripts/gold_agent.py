"""The gold agent (``python:scripts.gold_agent:gold_agent``): a good agent for live runs.

It makes the task's expected tool calls (its ``evaluation_criteria.actions``) one by one, then
says it is done; on a task that lists none (banking) it only says so. ``scripts.user_reactions``
runs it beside the floor agents to show the local user's reactions to an agent that does the
work (issue 29, item 5)::

    todeval simulate --domain retail --agent python:scripts.gold_agent:gold_agent --user local
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from typing import Any

from todeval.nodes.simulation.agents import AgentTurn
from todeval.nodes.simulation.domains import DOMAINS, gold_actions

DONE = "That is all done for you. Anything else?"


def gold_agent(
    messages: Sequence[Mapping[str, Any]], tools: Sequence[Any], *, policy: str, task_id: str
) -> AgentTurn:
    """The task's expected calls one by one, then :data:`DONE` (the policy names the domain)."""
    actions = gold_actions(_tasks(policy)[str(task_id)])
    made = sum(1 for m in messages if m.get("role") == "tool")
    if made < len(actions):
        return AgentTurn(content="", tool_calls=[actions[made]])
    return AgentTurn(content=DONE)


@functools.cache
def _tasks(policy: str) -> dict[str, Mapping[str, Any]]:
    """The tasks of the domain whose policy the agent was given (ids repeat across domains)."""
    domain = next(d for d in DOMAINS.values() if d.policy().strip() == policy.strip())
    tasks = json.loads(domain.tasks_path().read_text(encoding="utf-8"))
    return {str(task["id"]): task for task in tasks}
