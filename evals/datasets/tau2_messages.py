"""Converters shared by the tau2 and generic transcript loaders: messages, tasks, judgments.

Each converter reads one part of a raw record into the contract of
:mod:`evals.goal_shift_schema`. A part that cannot be read at all raises :class:`FieldError`
with the dotted field (the record is skipped); a problem the metrics can live with is returned
as a :class:`TranscriptIssue` (the conversation is still scored).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from evals.datasets.errors import FieldError, dotted
from evals.goal_shift_schema import (
    ActionSet,
    AllowedTool,
    Message,
    NLAssertionJudgment,
    ShiftJudgment,
    StoredJudgments,
    TaskSpec,
    ToolCall,
    ToolSchema,
    TranscriptIssue,
)

_ROLES = {"user", "assistant", "tool"}
_SKIPPED_ROLES = {"system", "developer"}


def as_mapping(value: Any) -> Mapping[str, Any]:
    """``value`` when it is a JSON object, else an empty mapping."""
    return value if isinstance(value, Mapping) else {}


def message_text(content: Any) -> str:
    """The text of a message: tau2 agents answer ``{"message": "..."}``; that wrapper is removed."""
    if content is None:
        return ""
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    stripped = text.strip()
    if stripped.startswith("{") and '"message"' in stripped:
        try:
            value = json.loads(stripped)
        except json.JSONDecodeError:
            return text
        if isinstance(value, dict) and isinstance(value.get("message"), str):
            return str(value["message"])
    return text


def transcript_messages(
    raw_messages: Sequence[Any], dialogue_id: str
) -> tuple[list[Message], list[TranscriptIssue]]:
    """Messages in the contract's shape, and the non-JSON arguments found on the way.

    Raises:
        FieldError: A message is not an object, has an unknown role, or a call has no name.
    """
    messages: list[Message] = []
    issues: list[TranscriptIssue] = []
    for index, raw in enumerate(raw_messages):
        where = f"messages.{index}"
        if not isinstance(raw, Mapping):
            raise FieldError(where, "a message must be a JSON object")
        role = str(raw.get("role", "")).strip().lower()
        if role in _SKIPPED_ROLES:
            continue
        if role not in _ROLES:
            raise FieldError(f"{where}.role", f"unknown role {raw.get('role')!r}")
        turn = raw.get("turn_idx", raw.get("turn"))
        calls = []
        for j, call in enumerate(raw.get("tool_calls") or []):
            parsed, issue = _tool_call(call, f"{where}.tool_calls.{j}", dialogue_id)
            calls.append(parsed)
            issues.extend([issue] if issue else [])
        content = message_text(raw.get("content"))
        messages.append(
            Message(
                turn=int(turn) if isinstance(turn, int) and turn >= 0 else index,
                role=role,
                content=content,
                tool_calls=calls,
                tool_call_id=_result_id(raw) if role == "tool" else None,
                error=_is_error(raw, content) if role == "tool" else False,
            )
        )
    return messages, issues


def _tool_call(raw: Any, where: str, dialogue_id: str) -> tuple[ToolCall, TranscriptIssue | None]:
    """tau2's ``{id, name, arguments}`` or OpenAI's ``{id, function: {name, arguments}}``."""
    if not isinstance(raw, Mapping):
        raise FieldError(where, "a tool call must be a JSON object")
    function = as_mapping(raw.get("function")) or raw
    name = function.get("name")
    if not isinstance(name, str) or not name:
        raise FieldError(f"{where}.name", "missing tool name")
    arguments = function.get("arguments", function.get("args", {}))
    call_id = str(raw.get("id") or f"{where}")
    if isinstance(arguments, Mapping):
        return ToolCall(id=call_id, name=name, arguments=dict(arguments)), None
    raw_text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    try:
        decoded = json.loads(raw_text) if isinstance(arguments, str) else arguments
    except json.JSONDecodeError:
        decoded = None
    if isinstance(decoded, dict):
        return ToolCall(id=call_id, name=name, arguments=decoded), None
    issue = TranscriptIssue(
        dialogue_id=dialogue_id,
        field=f"{where}.arguments",
        message=f"arguments of {name} are not a JSON object: {raw_text[:80]!r}",
    )
    return ToolCall(id=call_id, name=name, arguments=None, raw_arguments=raw_text), issue


def _result_id(raw: Mapping[str, Any]) -> str | None:
    value = raw.get("tool_call_id", raw.get("id"))
    return str(value) if value is not None else None


def _is_error(raw: Mapping[str, Any], content: str) -> bool:
    """tau2 records ``error``; a generic log without it counts results reading ``Error...``."""
    if "error" in raw and raw["error"] is not None:
        return bool(raw["error"])
    return content.strip().lower().startswith("error")


def transcript_issues(
    messages: Sequence[Message], dialogue_id: str, schemas: Mapping[str, ToolSchema] | None
) -> list[TranscriptIssue]:
    """Calls without a result, results without a call, and tools the schemas do not know."""
    results = {m.tool_call_id for m in messages if m.role == "tool"}
    calls: set[str] = set()
    issues = []
    for index, message in enumerate(messages):
        for j, call in enumerate(message.tool_calls):
            calls.add(call.id)
            where = f"messages.{index}.tool_calls.{j}"
            if call.id not in results:
                text = f"no tool result for call {call.id!r} ({call.name})"
                issues.append(TranscriptIssue(dialogue_id=dialogue_id, field=where, message=text))
            if schemas is not None and call.name not in schemas:
                text = f"unknown tool {call.name!r} (not in the domain's tool list)"
                issues.append(
                    TranscriptIssue(dialogue_id=dialogue_id, field=f"{where}.name", message=text)
                )
    for index, message in enumerate(messages):
        if message.role == "tool" and message.tool_call_id not in calls:
            text = f"tool result {message.tool_call_id!r} answers no call"
            issues.append(
                TranscriptIssue(dialogue_id=dialogue_id, field=f"messages.{index}", message=text)
            )
    return issues


def persona_name(persona: Any, personas: Mapping[str, str]) -> str | None:
    """A persona's name: a short key as is, a known persona text as its name, else a digest."""
    if not isinstance(persona, str) or not persona.strip():
        return None
    text = persona.strip()
    if text in personas or (len(text) <= 40 and not any(c.isspace() for c in text)):
        return text
    for name, description in personas.items():
        if isinstance(description, str) and description.strip() == text:
            return name
    return "custom-" + hashlib.sha1(text.encode("utf-8")).hexdigest()[:8]


def task_spec(raw: Any, personas: Mapping[str, str] | None) -> TaskSpec:
    """A tau2 / AgentChangeBench task (or a flat ``{goals, action_sets, ...}``) as a TaskSpec.

    Raises:
        FieldError: The task has no id or a malformed action set.
    """
    if not isinstance(raw, Mapping) or not str(raw.get("id") or raw.get("task_id") or ""):
        raise FieldError("id", "a task needs an id")
    scenario = as_mapping(raw.get("user_scenario")) or raw
    shifts = as_mapping(scenario.get("goal_shifts"))
    criteria = as_mapping(raw.get("evaluation_criteria")) or raw
    instructions = scenario.get("instructions")
    domain = instructions.get("domain") if isinstance(instructions, Mapping) else raw.get("domain")
    goals = shifts.get("goals", raw.get("goals")) or []
    try:
        return TaskSpec(
            task_id=str(raw.get("id") or raw.get("task_id")),
            domain=str(domain) if domain else None,
            persona=persona_name(scenario.get("persona"), personas or {}),
            goals=[str(goal) for goal in goals],
            required_shifts=shifts.get("required_shifts"),
            action_sets=_action_sets(criteria),
            communicate_info=[str(s) for s in criteria.get("communicate_info") or []],
            nl_assertions=[str(s) for s in criteria.get("nl_assertions") or []],
        )
    except ValidationError as exc:
        problem = exc.errors(include_url=False)[0]
        raise FieldError(f"evaluation_criteria.{dotted(problem['loc'])}", problem["msg"]) from exc


def _action_sets(criteria: Mapping[str, Any]) -> list[ActionSet]:
    """``action_sets``; failing that, legacy tau2 ``actions`` as one allowed tool each."""
    if criteria.get("action_sets"):
        return [ActionSet.model_validate(item) for item in criteria["action_sets"]]
    sets = []
    for index, action in enumerate(criteria.get("actions") or []):
        if not isinstance(action, Mapping) or not action.get("name"):
            raise FieldError(f"evaluation_criteria.actions.{index}", "an action needs a name")
        tool = AllowedTool(function_name=action["name"], params=action.get("arguments") or {})
        sets.append(ActionSet(action_id=str(action.get("action_id", index)), allowed_tools=[tool]))
    return sets


def stored_judgments(
    judged: Mapping[str, Any], dialogue_id: str
) -> tuple[StoredJudgments, list[TranscriptIssue]]:
    """``nl_assertions`` and ``info.gsrt_v2`` of a tau2 ``reward_info`` (or generic judgments)."""
    issues: list[TranscriptIssue] = []
    nl = None
    if isinstance(judged.get("nl_assertions"), list):
        try:
            nl = [NLAssertionJudgment.model_validate(item) for item in judged["nl_assertions"]]
        except ValidationError as exc:
            issues.append(_bad_stored(dialogue_id, "reward_info.nl_assertions", exc))
    info = as_mapping(judged.get("info")) or judged
    gsrt = as_mapping(info.get("gsrt_v2"))
    shifts = None
    if "gsrt_v2" in info:
        try:
            shifts = [_stored_shift(item) for item in gsrt.get("user_goal_shifts") or []]
        except (ValidationError, TypeError, KeyError) as exc:
            issues.append(_bad_stored(dialogue_id, "reward_info.info.gsrt_v2", exc))
    return StoredJudgments(nl_assertions=nl, shifts=shifts), issues


def _stored_shift(item: Mapping[str, Any]) -> ShiftJudgment:
    return ShiftJudgment(
        turn=item["turn"],
        from_goal=item.get("from"),
        to_goal=item.get("to"),
        acknowledgment_turn=item.get("acknowledgment_turn"),
        tool_turn=item.get("tool_turn"),
        outcome_turn=item.get("outcome_turn"),
        transferred_to_human=bool(item.get("transferred_to_human")),
    )


def _bad_stored(dialogue_id: str, where: str, exc: Exception) -> TranscriptIssue:
    text = f"stored judge output unreadable, judged again: {str(exc).splitlines()[0][:120]}"
    return TranscriptIssue(dialogue_id=dialogue_id, field=where, message=text)
