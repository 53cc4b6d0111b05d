"""Did the simulated user play its task? Flags per conversation, for every conversation.

tau2-bench's maintainers found simulators that invent facts (#172: a passenger no task names) and
a quarter of one model's retail failures that were the simulator's (PR #392). A benchmark that
blames those on the agent misleads, so every conversation is audited, not only the failed ones:

- ``invented_fact``: the user states a fact of a kind its ``known_info`` gives (name, phone,
  date of birth, email, ids, amounts ...) with a value the task does not give
  (:func:`evals.task_facts.contradictions`);
- ``stopped_early``: the user ended the conversation before reaching its task's last goal;
- ``skipped_shift``: the user made fewer goal shifts than the task requires.

The goals the user reached come from the local simulator's own notes (``todeval.user_notes``)
or, for recorded runs, from the shift judge's stored output (``reward_info.info.gsrt_v2``);
a conversation with neither is audited for facts only (``goals_audited`` is False). A
conversation the agent handed to a human, or that ended on the agent's error or the step limit,
is not the user's to finish: only its facts are audited.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from todeval.evals.task_facts import contradictions

_NOT_THE_USERS = frozenset({"agent_error", "agent_stop", "max_steps", "too_many_errors"})


def audit_simulator(task: Mapping[str, Any], simulation: Mapping[str, Any]) -> dict[str, Any]:
    """``{"flags": [{flag, message_index, evidence}], "goals_audited": bool}``."""
    messages: Sequence[Mapping[str, Any]] = simulation.get("messages") or []
    scenario = task.get("user_scenario") or {}
    instructions = scenario.get("instructions") or {}
    known = str(instructions.get("known_info", "")) if isinstance(instructions, Mapping) else ""
    flags = []
    if simulation.get("termination_reason") == "user_error":
        detail = (simulation.get("todeval") or {}).get("termination_detail")
        flags.append(_flag("user_error", len(messages) - 1, f"user_error: {detail}"))
    for index, message in enumerate(messages):
        if message.get("role") == "user" and known:
            for wrong in contradictions(known, str(message.get("content") or "")):
                stated = f"states {wrong.kind} {wrong.stated!r}, not the task's"
                flags.append(_flag("invented_fact", index, stated))
                break
    progress = _goal_progress(simulation)
    shifts = scenario.get("goal_shifts") or {}
    goals = [str(g) for g in shifts.get("goals") or []]
    audited = progress is not None and bool(goals) and _users_to_finish(simulation, messages)
    if audited and progress is not None:
        reached, announced, at = progress
        if simulation.get("termination_reason") == "user_stop" and reached < len(goals) - 1:
            flags.append(
                _flag("stopped_early", at, f"stopped on goal {reached + 1} of {len(goals)}")
            )
        required = int(shifts.get("required_shifts") or 0)
        if announced < required:
            flags.append(
                _flag("skipped_shift", at, f"announced {announced} of {required} goal shifts")
            )
    return {"flags": flags, "goals_audited": audited}


def _goal_progress(simulation: Mapping[str, Any]) -> tuple[int, int, int | None] | None:
    """(index of the last goal reached, shifts made, message index) or None when unknown."""
    notes = (simulation.get("todeval") or {}).get("user_notes") or []
    if notes:
        last = notes[-1]
        shifted = sum(1 for note in notes if note.get("shifted"))
        return int(last.get("goal_index", 0)), shifted, last.get("message_index")
    info = ((simulation.get("reward_info") or {}).get("info") or {}).get("gsrt_v2")
    if not isinstance(info, Mapping) or "user_goal_shifts" not in info:
        return None
    made = [s for s in info.get("user_goal_shifts") or [] if isinstance(s, Mapping)]
    return len(made), len(made), None


def _users_to_finish(simulation: Mapping[str, Any], messages: Sequence[Mapping[str, Any]]) -> bool:
    """False when the agent ended it: a hand-over to a human, an agent error, the step limit."""
    if simulation.get("termination_reason") in _NOT_THE_USERS:
        return False
    for message in messages:
        for call in message.get("tool_calls") or []:
            if isinstance(call, Mapping) and str(call.get("name", "")).startswith(
                "transfer_to_human"
            ):
                return False
    return True


def _flag(flag: str, index: int | None, evidence: str) -> dict[str, Any]:
    return {"flag": flag, "message_index": index, "evidence": evidence}


def audit_run(
    tasks: Iterable[Mapping[str, Any]], simulations: Iterable[Mapping[str, Any]]
) -> dict[str, Any]:
    """Every conversation's flags, and per flag how many conversations carry it."""
    by_id = {str(task.get("id")): task for task in tasks}
    rows: list[dict[str, Any]] = []
    counts: dict[str, int] = {}
    audited = total = 0
    for simulation in simulations:
        total += 1
        audit = audit_simulator(by_id.get(str(simulation.get("task_id")), {}), simulation)
        audited += audit["goals_audited"]
        if audit["flags"]:
            rows.append({"id": simulation.get("id"), **audit})
        for flag in {f["flag"] for f in audit["flags"]}:
            counts[flag] = counts.get(flag, 0) + 1
    return {
        "conversations": total,
        "flagged": len(rows),
        "goals_audited": audited,
        "counts": dict(sorted(counts.items())),
        "flagged_conversations": rows,
    }


def figures_apart(
    rows: Iterable[Mapping[str, Any]], flagged: Iterable[str]
) -> dict[str, dict[str, Any]]:
    """Mean TSR and reward over the conversations the audit passed and those it flagged.

    ``rows`` are the goal-shift rows (``dialogue_id``, ``tsr``, ``reward``); a figure of a
    group with no scored conversation is None.
    """
    flagged_ids = set(flagged)
    groups: dict[str, list[Mapping[str, Any]]] = {"simulator_ok": [], "simulator_flagged": []}
    for row in rows:
        key = "simulator_flagged" if row.get("dialogue_id") in flagged_ids else "simulator_ok"
        groups[key].append(row)
    return {name: _means(members) for name, members in groups.items()}


def _means(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    figures: dict[str, Any] = {"conversations": len(rows)}
    for name in ("tsr", "reward"):
        values = [float(row[name]) for row in rows if row.get(name) is not None]
        figures[name] = round(sum(values) / len(values), 4) if values else None
    return figures
