"""Whose fault a failed simulated conversation is: the agent's, the user's or the environment's.

tau2's maintainers found up to 30 % of failed retail conversations were the simulator's fault
(tau2 issues #392, #182). The rules, in order, each with the message that shows it:

1. **environment**: a tool failed by itself, or the conversation ended on an environment error;
2. **user simulator**: the simulator audit flagged it (it failed to reply, stated a fact the
   task does not give, stopped before the task's last goal or made too few shifts:
   :mod:`evals.metrics.simulation.simulator_audit`);
3. **agent**: everything else, with the first unmet action set as evidence.

Only conversations with a computed reward below 1 are attributed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from todeval.evals.metrics.simulation.simulator_audit import audit_simulator


def attribute(task: Mapping[str, Any], simulation: Mapping[str, Any]) -> dict[str, Any]:
    """``{"cause": agent|user_simulator|environment, "message_index", "evidence"}``."""
    messages: Sequence[Mapping[str, Any]] = simulation.get("messages") or []
    reason = str(simulation.get("termination_reason") or "")
    for index, message in enumerate(messages):
        injected = message.get("fault")  # a fault put there on purpose tests the agent
        if message.get("role") == "tool" and message.get("error_kind") == "environment":
            if not injected:
                return _cause("environment", index, f"tool {message.get('name')} failed by itself")
    flags = audit_simulator(task, simulation)["flags"]
    if flags:
        return _cause("user_simulator", flags[0]["message_index"], flags[0]["evidence"])
    if reason in ("agent_error", "agent_stop", "max_steps"):
        detail = (simulation.get("todeval") or {}).get("termination_detail")
        return _cause("agent", len(messages) - 1, f"{reason}: {detail}" if detail else reason)
    return _cause("agent", _last_agent_index(messages), _first_unmet_action(simulation))


def _first_unmet_action(simulation: Mapping[str, Any]) -> str:
    reward = simulation.get("reward_info") or {}
    for check in reward.get("action_checks") or []:
        if isinstance(check, Mapping) and not check.get("action_match", True):
            action = check.get("action") or {}
            return (
                f"action set {action.get('action_id', '?')} not met (e.g. {action.get('name')} "
                f"with {action.get('arguments')})"
            )
    return "the task's checks were not all met"


def _last_agent_index(messages: Sequence[Mapping[str, Any]]) -> int | None:
    indices = [i for i, m in enumerate(messages) if m.get("role") == "assistant"]
    return indices[-1] if indices else None


def _cause(cause: str, index: int | None, evidence: str) -> dict[str, Any]:
    return {"cause": cause, "message_index": index, "evidence": evidence}


def attribute_failures(
    tasks: Iterable[Mapping[str, Any]], simulations: Iterable[Mapping[str, Any]]
) -> dict[str, Any]:
    """Every failed conversation's cause, and the counts per cause."""
    by_id = {str(task.get("id")): task for task in tasks}
    rows = []
    for simulation in simulations:
        reward = (simulation.get("reward_info") or {}).get("reward")
        if reward is None or float(reward) >= 1.0:
            continue
        task = by_id.get(str(simulation.get("task_id")), {})
        rows.append({"id": simulation.get("id"), "reward": reward} | attribute(task, simulation))
    return {"counts": dict(Counter(row["cause"] for row in rows)), "failures": rows}
