"""Grading a finished simulated conversation the way its benchmark does, as tau2 ``reward_info``.

AgentChangeBench's three channels (paper 002, Eq. 1, scored by
:mod:`evals.metrics.goal_shift.task_success`): action sets (legacy gold ``actions`` count as
one-tool sets), communicate_info, and nl_assertion judgments the caller got from the judge
role (grading judges nothing). Where the task lists gold actions, tau2's DB check compares the
final database with the one the gold actions produce; it is reported beside the reward (the
TSR), not folded in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from todeval.evals.datasets.tau2_messages import task_spec, transcript_messages
from todeval.evals.goal_shift_schema import Conversation, NLAssertionJudgment, TaskSpec, ToolCall
from todeval.evals.metrics.goal_shift.task_success import (
    action_rate,
    action_set_scores,
    communicate_info_checks,
    communicate_info_rate,
    nl_assertion_rate,
    params_match,
    task_success_rate,
)

_BREAKDOWN_KEYS = {
    "action": "ACTION",
    "nl_assertion": "NL_ASSERTION",
    "communicate_info": "COMMUNICATE",
}
_MISSING = object()


def conversation_for_grading(
    messages: Sequence[Mapping[str, Any]],
    task: Mapping[str, Any],
    *,
    dialogue_id: str = "simulation",
    trial: int = 0,
) -> Conversation:
    """A tau2 transcript and its task as the goal-shift contract (what the judges read).

    Raises:
        FieldError: A message or the task is malformed.
    """
    spec = task_spec(task, None)
    parsed, _, issues = transcript_messages(messages, dialogue_id)
    return Conversation(
        dialogue_id=dialogue_id,
        task_id=spec.task_id,
        trial=trial,
        domain=spec.domain,
        persona=spec.persona,
        messages=parsed,
        task=spec,
        issues=issues,
    )


def grade_conversation(
    messages: Sequence[Mapping[str, Any]],
    task: Mapping[str, Any],
    snapshot: Mapping[str, Any] | None = None,
    *,
    domain: str | None = None,
    gold_snapshot: Mapping[str, Any] | None = None,
    nl_judgments: Sequence[NLAssertionJudgment] | None = None,
    nl_judge: str | None = None,
    upstream: bool = False,
) -> dict[str, Any]:
    """The tau2 ``reward_info`` of one finished conversation (see the module doc).

    ``gold_snapshot`` None skips the DB check; ``nl_judgments`` None (or none judged) drops
    the channel and leaves ``nl_assertions`` null for a later scorer. ``upstream``: the action
    channel by AgentChangeBench's code (half an action set for the right tool, whatever its
    arguments); by default the half needs some expected argument to match, as the goal-shift
    scorer does, so ``simulate``'s rewards and TSR agree.

    Raises:
        FieldError: A message or the task is malformed.
    """
    conversation = conversation_for_grading(messages, task)
    spec = conversation.task or TaskSpec(task_id=conversation.task_id)
    said = [m.content for m in conversation.messages if m.role == "assistant"]
    calls = [call for m in conversation.messages for call in m.tool_calls]
    judged = [j for j in nl_judgments or [] if j.met is not None]
    channels = {
        "communicate_info": communicate_info_rate(spec.communicate_info, said),
        "action": action_rate(spec.action_sets, calls, upstream=upstream),
        "nl_assertion": nl_assertion_rate(judged) if spec.nl_assertions and judged else None,
    }
    tsr, weights = task_success_rate(channels)
    nl_details = [j.model_dump() for j in nl_judgments or []] if judged else None
    reward_info: dict[str, Any] = {
        "reward": tsr if tsr is not None else 0.0,
        "db_check": None,
        "env_assertions": None,
        "action_checks": action_checks(spec, calls, upstream=upstream)
        if spec.action_sets
        else None,
        "nl_assertions": nl_details,
        "communicate_checks": _communicate_checks(spec, said) if spec.communicate_info else None,
        "reward_basis": [_BREAKDOWN_KEYS[name] for name in weights],
        "reward_breakdown": {
            _BREAKDOWN_KEYS[name]: value for name, value in channels.items() if value is not None
        },
        "info": {
            "tsr_details": {
                "overall_tsr": tsr,
                **channels,
                "weights_used": weights,
                "has_actions": channels["action"] is not None,
                "has_nl_assertions": channels["nl_assertion"] is not None,
                "has_communicate_info": channels["communicate_info"] is not None,
                "nl_assertion_details": nl_details or [],
            },
            "nl_judge": nl_judge if judged else None,
            "domain": domain or conversation.domain,
        },
    }
    if gold_snapshot is not None and snapshot is not None:
        differing = database_diff(snapshot, gold_snapshot)
        reward_info["db_check"] = {
            "db_match": not differing,
            "db_reward": 0.0 if differing else 1.0,
        }
        reward_info["info"]["db_diff"] = differing
    return reward_info


def action_checks(
    spec: TaskSpec, calls: Sequence[ToolCall], *, upstream: bool = False
) -> list[dict[str, Any]]:
    """Per action set: the tool it names, AgentChangeBench's reward, and whether it was met.

    ``action_match`` is true when any call of an allowed tool had matching parameters;
    ``action_reward`` is AgentChangeBench's score, which looks at each tool's first call only.
    """
    checks = []
    for action, reward in zip(
        spec.action_sets, action_set_scores(spec.action_sets, calls, upstream=upstream), strict=True
    ):
        matched = next(
            (
                (tool, call)
                for call in calls
                for tool in action.allowed_tools
                if call.name == tool.function_name and params_match(call.arguments, tool.params)
            ),
            None,
        )
        tool = matched[0] if matched else action.allowed_tools[0] if action.allowed_tools else None
        checks.append(
            {
                "action": {
                    "action_id": action.action_id,
                    "requestor": "assistant",
                    "name": tool.function_name if tool else None,
                    "arguments": dict(tool.params) if tool else {},
                },
                "action_match": matched is not None,
                "action_reward": reward,
                "matched_call_id": matched[1].id if matched else None,
            }
        )
    return checks


def database_diff(final: Mapping[str, Any], gold: Mapping[str, Any]) -> list[str]:
    """The records that differ, as ``table/key``; a table of lists is keyed by its ``*_id``.

    A table that is neither keyed nor a list of identified records is named whole.
    """
    differing: list[str] = []
    for table in sorted(set(final) | set(gold)):
        ours, theirs = final.get(table, _MISSING), gold.get(table, _MISSING)
        if ours == theirs:
            continue
        ours_keyed, theirs_keyed = _keyed(ours), _keyed(theirs)
        if ours_keyed is None or theirs_keyed is None:
            differing.append(table)
            continue
        keys = sorted(set(ours_keyed) | set(theirs_keyed), key=str)
        differing.extend(
            f"{table}/{key}"
            for key in keys
            if ours_keyed.get(key, _MISSING) != theirs_keyed.get(key, _MISSING)
        )
    return differing


def _keyed(table: Any) -> Mapping[Any, Any] | None:
    """A table by record key: a mapping as is, a list of records by their first ``*_id``."""
    if isinstance(table, Mapping):
        return table
    if not isinstance(table, list) or not all(isinstance(r, Mapping) and r for r in table):
        return None
    id_field = next(iter(table[0]), "") if table else ""
    if not str(id_field).endswith("_id"):
        return None if table else {}
    keyed = {record.get(id_field): record for record in table}
    return keyed if len(keyed) == len(table) else None


def _communicate_checks(spec: TaskSpec, said: Sequence[str]) -> list[dict[str, Any]]:
    met = communicate_info_checks(spec.communicate_info, said)
    return [
        {"info": info, "met": ok, "justification": "said by the agent" if ok else "never said"}
        for info, ok in zip(spec.communicate_info, met, strict=True)
    ]
