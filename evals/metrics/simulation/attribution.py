"""Whose fault a failed simulated conversation is: the agent's, the user's or the environment's.

tau2's maintainers found up to 30 % of failed retail conversations were the simulator's fault
(tau2 issues #392, #182). The rules, in order, each with the message that shows it:

1. **environment**: a tool failed by itself, or the conversation ended on an environment error;
2. **user simulator**: it failed to reply, stopped before the task's last goal, announced too
   few shifts, or stated a known-info fact with a value the task does not give
   (:func:`evals.task_facts.contradictions`);
3. **agent**: everything else, with the first unmet action set as evidence.

Only conversations with a computed reward below 1 are attributed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from todeval.evals.task_facts import contradictions


def attribute(task: Mapping[str, Any], simulation: Mapping[str, Any]) -> dict[str, Any]:
    """``{"cause": agent|user_simulator|environment, "message_index", "evidence"}``."""
    messages: Sequence[Mapping[str, Any]] = simulation.get("messages") or []
    reason = str(simulation.get("termination_reason") or "")
    for index, message in enumerate(messages):
        if message.get("role") == "tool" and message.get("error_kind") == "environment":
            return _cause("environment", index, f"tool {message.get('name')} failed by itself")
    simulator = _simulator_fault(task, simulation, messages, reason)
    if simulator is not None:
        return simulator
    if reason in ("agent_error", "agent_stop", "max_steps"):
        detail = (simulation.get("todeval") or {}).get("termination_detail")
        return _cause("agent", len(messages) - 1, f"{reason}: {detail}" if detail else reason)
    return _cause("agent", _last_agent_index(messages), _first_unmet_action(simulation))


def _simulator_fault(
    task: Mapping[str, Any],
    simulation: Mapping[str, Any],
    messages: Sequence[Mapping[str, Any]],
    reason: str,
) -> dict[str, Any] | None:
    if reason == "user_error":
        detail = (simulation.get("todeval") or {}).get("termination_detail")
        return _cause("user_simulator", len(messages) - 1, f"user_error: {detail}")
    scenario = task.get("user_scenario") or {}
    instructions = scenario.get("instructions") or {}
    known = str(instructions.get("known_info", "")) if isinstance(instructions, dict) else ""
    for index, message in enumerate(messages):
        if message.get("role") != "user" or not known:
            continue
        for wrong in contradictions(known, str(message.get("content") or "")):
            return _cause("user_simulator", index,
                          f"states {wrong.kind} {wrong.stated!r}, not the task's")  # fmt: skip
    notes = (simulation.get("todeval") or {}).get("user_notes") or []
    shifts = scenario.get("goal_shifts") or {}
    goals = shifts.get("goals") or []
    if reason == "user_stop" and notes and goals:
        last = notes[-1]
        if int(last.get("goal_index", 0)) < len(goals) - 1:
            return _cause("user_simulator", int(last["message_index"]),
                          f"stopped on goal {last['goal_index'] + 1} of {len(goals)}")  # fmt: skip
        announced = sum(1 for note in notes if note.get("shifted"))
        required = int(shifts.get("required_shifts") or 0)
        if announced < required:
            return _cause("user_simulator", int(last["message_index"]),
                          f"announced {announced} of {required} goal shifts")  # fmt: skip
    return None


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
