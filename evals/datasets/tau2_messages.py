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

from todeval.evals.datasets.errors import FieldError, dotted
from todeval.evals.datasets.jsonsafe import loads_json
from todeval.evals.goal_shift_schema import (
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
            value = loads_json(stripped)
        except json.JSONDecodeError:
            return text
        if isinstance(value, dict) and isinstance(value.get("message"), str):
            return str(value["message"])
    return text


def transcript_messages(
    raw_messages: Sequence[Any], dialogue_id: str
) -> tuple[list[Message], list[int], list[TranscriptIssue]]:
    """Messages in the contract's shape (no system messages), their indices and the issues found.

    Raises:
        FieldError: A message is not an object, has an unknown role, or a call has no name.
    """
    messages: list[Message] = []
    positions: list[int] = []
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
        raw_calls = raw.get("tool_calls") or []
        if not isinstance(raw_calls, list):
            raise FieldError(f"{where}.tool_calls", "expected a list of tool calls")
        for j, call in enumerate(raw_calls):
            parsed, issue = _tool_call(call, f"{where}.tool_calls.{j}", dialogue_id)
            calls.append(parsed)
            issues.extend([issue] if issue else [])
        # A tool result stays as logged: upstream's parameter rule reads its raw text.
        content = (
            _logged_text(raw.get("content")) if role == "tool" else message_text(raw.get("content"))
        )
        positions.append(index)
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
    return messages, positions, issues


def _logged_text(content: Any) -> str:
    """A tool result's text as logged (JSON for a non-text value)."""
    if content is None:
        return ""
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)


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
        decoded = loads_json(raw_text) if isinstance(arguments, str) else arguments
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


#: Why unknown tools cannot be flagged in a transcript with no tool list (an honest "unknown").
TOOLS_NOT_CHECKED = (
    "tool names not checked: no tool list is known for this transcript (give it a 'tools' "
    "list, a paper 002 domain (banking, retail, airline) or --tools)"
)


def transcript_issues(
    messages: Sequence[Message],
    dialogue_id: str,
    schemas: Mapping[str, ToolSchema] | None,
    positions: Sequence[int] | None = None,
) -> list[TranscriptIssue]:
    """Calls without a result, results without a call, and tools the schemas do not know.

    With ``schemas`` None one issue says the names were not checked.
    """
    at = list(positions) if positions is not None else list(range(len(messages)))
    results = {m.tool_call_id for m in messages if m.role == "tool"}
    calls: set[str] = set()
    issues = []
    for index, message in enumerate(messages):
        for j, call in enumerate(message.tool_calls):
            calls.add(call.id)
            where = f"messages.{at[index]}.tool_calls.{j}"
            if call.id not in results:
                text = f"no tool result for call {call.id!r} ({call.name})"
                issues.append(TranscriptIssue(dialogue_id=dialogue_id, field=where, message=text))
            if schemas is not None and call.name not in schemas:
                text = f"unknown tool {call.name!r} (not in this transcript's tool list)"
                issues.append(
                    TranscriptIssue(dialogue_id=dialogue_id, field=f"{where}.name", message=text)
                )
    if schemas is None and calls:
        issues.append(
            TranscriptIssue(dialogue_id=dialogue_id, field="tools", message=TOOLS_NOT_CHECKED)
        )
    for index, message in enumerate(messages):
        if message.role == "tool" and message.tool_call_id not in calls:
            text = f"tool result {message.tool_call_id!r} answers no call"
            issues.append(
                TranscriptIssue(
                    dialogue_id=dialogue_id, field=f"messages.{at[index]}", message=text
                )
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
    # surrogatepass: a name for any text the parser let through, never an encoding crash.
    return "custom-" + hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]


def task_spec(raw: Any, personas: Mapping[str, str] | None) -> TaskSpec:
    """A tau2 / AgentChangeBench task (or a flat ``{goals, action_sets, ...}``) as a TaskSpec.

    Raises:
        FieldError: The task has no id or a malformed part; the field is its path in the task
            (``evaluation_criteria.action_sets.1.allowed_tools`` or, flat, ``action_sets.1...``).
    """
    if not isinstance(raw, Mapping):
        raise FieldError("<record>", "a task must be a JSON object")
    task_id = raw.get("id") or raw.get("task_id")
    if not isinstance(task_id, str | int) or isinstance(task_id, bool) or not str(task_id):
        raise FieldError("id", "a task needs an id (text or a whole number)")
    scenario, at_scenario = _part(raw, "user_scenario")
    shifts = as_mapping(scenario.get("goal_shifts"))
    criteria, at_criteria = _part(raw, "evaluation_criteria")
    instructions = scenario.get("instructions")
    domain = instructions.get("domain") if isinstance(instructions, Mapping) else raw.get("domain")
    if "goals" in shifts:
        goals = _texts(shifts["goals"], f"{at_scenario}goal_shifts.goals")
    else:
        goals = _texts(raw.get("goals"), "goals")
    try:
        return TaskSpec(
            task_id=str(task_id),
            domain=str(domain) if isinstance(domain, str | int) and domain else None,
            persona=persona_name(scenario.get("persona"), personas or {}),
            goals=goals,
            required_shifts=shifts.get("required_shifts"),
            action_sets=_action_sets(criteria, at_criteria),
            communicate_info=_texts(
                criteria.get("communicate_info"), f"{at_criteria}communicate_info"
            ),
            nl_assertions=_texts(criteria.get("nl_assertions"), f"{at_criteria}nl_assertions"),
        )
    except ValidationError as exc:  # required_shifts is the one field checked only here
        problem = exc.errors(include_url=False)[0]
        raise FieldError(
            f"{at_scenario}goal_shifts.{dotted(problem['loc'])}", problem["msg"]
        ) from exc


def _part(raw: Mapping[str, Any], key: str) -> tuple[Mapping[str, Any], str]:
    """tau2's nested part (``user_scenario``, ...) and its path prefix, or the flat task."""
    part = as_mapping(raw.get(key))
    return (part, f"{key}.") if part else (raw, "")


def _texts(value: Any, where: str) -> list[str]:
    """A list of texts (numbers are read as text); None is an empty list.

    Raises:
        FieldError: ``value`` is not a list, or an item is an object or a list.
    """
    if value is None:
        return []
    if not isinstance(value, list):
        raise FieldError(where, "expected a list of texts")
    for index, item in enumerate(value):
        if isinstance(item, dict | list):
            raise FieldError(f"{where}.{index}", "expected a text")
    return [str(item) for item in value]


def _action_sets(criteria: Mapping[str, Any], at: str) -> list[ActionSet]:
    """``action_sets``; failing that, legacy tau2 ``actions`` as one allowed tool each.

    Raises:
        FieldError: An action set or action is malformed (``at`` prefixes the field).
    """
    if criteria.get("action_sets"):
        items = criteria["action_sets"]
        if not isinstance(items, list):
            raise FieldError(f"{at}action_sets", "expected a list of action sets")
        sets = []
        for index, item in enumerate(items):
            try:
                sets.append(ActionSet.model_validate(item))
            except ValidationError as exc:
                problem = exc.errors(include_url=False)[0]
                where = f"{at}action_sets.{index}.{dotted(problem['loc'])}".rstrip(".")
                raise FieldError(where, problem["msg"]) from exc
        return sets
    actions = criteria.get("actions") or []
    if not isinstance(actions, list):
        raise FieldError(f"{at}actions", "expected a list of actions")
    sets = []
    for index, action in enumerate(actions):
        name = action.get("name") if isinstance(action, Mapping) else None
        if not isinstance(name, str) or not name:
            raise FieldError(f"{at}actions.{index}", "an action needs a name")
        arguments = action.get("arguments") or {}
        if not isinstance(arguments, Mapping):
            raise FieldError(f"{at}actions.{index}.arguments", "expected a JSON object")
        tool = AllowedTool(function_name=name, params=dict(arguments))
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
