"""Tool Usage Efficiency (paper 002, Eq. 2), from tool calls.

TUE = 0.6 T + 0.4 P: T the share of calls whose result is not an error, P the share whose
arguments satisfy the tool's schema. By the letter of Eq. 2 a hand-over or a lookup with
made-up identifiers that returns an empty list is a correct, valid call; TUE is therefore
given only for conversations with a call that serves the task (:func:`serves_task`), n/a for
the others (counted, not hidden). Without schemas, P uses upstream's rule: a call is invalid
only when its error text names a parameter problem (:data:`PARAM_ERROR_KEYWORDS`).
``--compat upstream`` always does as AgentChangeBench's ``extract_tool_calls_for_tue``: every
call of every role counts, a call with no result is correct and valid, the result is looked up
by id (last wins), keywords are searched in its raw lower-cased content.
:func:`parameter_validity_differences` lists the calls where the two rules disagree.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NotRequired

from typing_extensions import TypedDict  # pydantic (server schemas) needs it on 3.11

from todeval.evals.goal_shift_schema import Message, ToolSchema
from todeval.evals.metrics.goal_shift.grounding import serving_calls

TUE_WEIGHTS: dict[str, float] = {"tool_correctness": 0.6, "param_validity": 0.4}
"""Eq. 2 weights (Appendix B.1)."""

PARAM_ERROR_KEYWORDS: tuple[str, ...] = (
    "invalid parameter",
    "missing parameter",
    "parameter error",
    "bad parameter",
    "invalid argument",
    "missing argument",
)
"""Error texts AgentChangeBench's code reads as invalid parameters when it has no schemas."""

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
    "null": (type(None),),
}


class ToolCallRecord(TypedDict):
    """One tool call as the tool metrics see it."""

    call_id: str
    name: str
    role: str
    turn: int
    assistant_turn: int
    """Assistant messages so far, this one included (the TCRR turn index)."""
    identity: str
    """Tool name and normalised arguments: equal identities are duplicate calls."""
    has_result: bool
    error: bool | None
    """Whether the result is an error; None when the call has no result."""
    params_valid: bool
    """Arguments satisfy the schema (or, without schemas, the keyword rule)."""
    params_valid_keyword: bool
    """The upstream keyword rule on the result's error text."""
    params_problem: NotRequired[str | None]
    """Why the schema rule found the arguments invalid (None: valid, or no schemas known)."""
    serves_task: NotRequired[bool]
    """A call that works on the task (:func:`~evals.metrics.goal_shift.grounding.serving_calls`):
    not a hand-over, arguments not made up, a tool the task's action sets allow."""


def normalised_arguments(arguments: Any) -> Any:
    """Arguments in a canonical form: keys sorted, lists sorted, recursively."""
    if isinstance(arguments, Mapping):
        return {str(k): normalised_arguments(v) for k, v in sorted(arguments.items())}
    if isinstance(arguments, list | tuple):
        items = [normalised_arguments(item) for item in arguments]
        return sorted(items, key=lambda item: json.dumps(item, sort_keys=True, default=str))
    return arguments


def call_identity(name: str, arguments: Mapping[str, Any] | None, raw: str | None = None) -> str:
    """``name`` plus canonical JSON of the arguments (the raw text when they were not JSON)."""
    if arguments is None:
        return f"{name}:raw:{raw or ''}"
    canonical = json.dumps(normalised_arguments(arguments), sort_keys=True, default=str)
    return f"{name}:{canonical}"


def arguments_satisfy_schema(arguments: Mapping[str, Any] | None, schema: ToolSchema) -> bool:
    """Required parameters set (not null), no unknown ones, declared JSON types respected."""
    return schema_problem(arguments, schema) is None


def schema_problem(arguments: Mapping[str, Any] | None, schema: ToolSchema) -> str | None:
    """Why ``arguments`` do not satisfy ``schema`` (None when they do)."""
    if arguments is None:
        return "arguments are not a JSON object"
    for name in schema.required:
        if arguments.get(name) is None:
            return f"required parameter {name!r} missing"
    for name, value in arguments.items():
        spec = schema.properties.get(name)
        if spec is None:
            if not schema.additional_properties:
                return f"unknown parameter {name!r}"
            continue
        if value is None and name not in schema.required:
            continue  # an optional parameter passed as null means "not given"
        if not _type_ok(value, spec.get("type")):
            return f"parameter {name!r} is not of type {spec.get('type')!r}"
    return None


def _type_ok(value: Any, declared: Any) -> bool:
    if declared is None:
        return True
    names = declared if isinstance(declared, list) else [declared]
    for name in names:
        kinds = _JSON_TYPES.get(str(name))
        if kinds is None:
            return True  # a type we do not know is not held against the call
        if isinstance(value, bool) and name in ("integer", "number"):
            continue  # JSON booleans are not numbers
        if isinstance(value, kinds):
            return True
    return False


def keyword_params_valid(error: bool | None, content: str) -> bool:
    """The upstream rule: invalid only if an error result names a parameter problem."""
    if not error or not content:
        return True
    text = content.lower()
    return not any(keyword in text for keyword in PARAM_ERROR_KEYWORDS)


def tool_call_records(
    messages: Sequence[Message],
    schemas: Mapping[str, ToolSchema] | None,
    *,
    task_tools: Collection[str] | None = None,
) -> list[ToolCallRecord]:
    """Every tool call of a transcript, in order, with its result and validity.

    A call's result is the last tool message answering its id, as in upstream's code (a
    dict keyed by the result's id); the keyword rule reads that result's raw content.
    ``task_tools``: the tools the task's action sets allow (None or empty: any tool), for
    ``serves_task``.
    """
    serving = serving_calls(messages, task_tools)
    results = {m.tool_call_id: m for m in messages if m.role == "tool"}
    records: list[ToolCallRecord] = []
    assistant_turn = 0
    for message in messages:
        if message.role == "assistant":
            assistant_turn += 1
        for call in message.tool_calls:
            result = results.get(call.id)
            error = result.error if result is not None else None
            keyword_ok = keyword_params_valid(error, result.content if result else "")
            problem: str | None = None
            if schemas is None:
                valid = keyword_ok
            else:
                schema = schemas.get(call.name)
                problem = (
                    f"no schema for tool {call.name!r}"
                    if schema is None
                    else schema_problem(call.arguments, schema)
                )
                valid = problem is None
            records.append(
                ToolCallRecord(
                    call_id=call.id,
                    name=call.name,
                    role=message.role,
                    turn=message.turn,
                    assistant_turn=assistant_turn,
                    identity=call_identity(call.name, call.arguments, call.raw_arguments),
                    has_result=result is not None,
                    error=error,
                    params_valid=valid,
                    params_valid_keyword=keyword_ok,
                    params_problem=problem,
                    serves_task=call.id in serving,
                )
            )
    return records


def parameter_validity_differences(
    rows: Iterable[Mapping[str, Any]],
) -> list[dict[str, Any]]:
    """Calls whose validity differs between the schema rule and upstream's keyword rule, and why."""
    differences = []
    for row in rows:
        for record in row.get("tool_calls") or []:
            ours, theirs = record["params_valid"], record["params_valid_keyword"]
            if ours == theirs:
                continue
            reason = record.get("params_problem") or (
                "the result's error text names a parameter problem (upstream's keyword rule) "
                "though the arguments satisfy the schema"
            )
            differences.append(
                {
                    "dialogue_id": row.get("dialogue_id"),
                    "call_id": record["call_id"],
                    "name": record["name"],
                    "role": record["role"],
                    "schema_rule": ours,
                    "upstream_rule": theirs,
                    "reason": reason,
                }
            )
    return differences


def serves_task(records: Iterable[ToolCallRecord]) -> bool:
    """Some assistant call of one conversation serves the task (rows without the field: yes).

    TUE (Eq. 2) measures how well the calls that work on the task are made: T, the share
    that execute, and P, the share whose arguments are valid. A conversation whose only calls
    are hand-overs or made-up lookups has no such call, so its TUE is n/a, not the 1.0 that
    ``transfer_to_human_agents`` or an empty search would give (issue 29).
    """
    return any(r.get("serves_task", True) for r in records if r["role"] == "assistant")


def tue_not_applicable(conversations: Iterable[Sequence[ToolCallRecord]]) -> int:
    """Conversations with assistant calls, none of which serves the task (TUE left out)."""
    return sum(
        1
        for records in conversations
        if any(r["role"] == "assistant" for r in records) and not serves_task(records)
    )


@dataclass(frozen=True)
class ToolUsage:
    """TUE and its parts over a set of calls (counts kept so groups add up)."""

    calls: int
    judged_calls: int
    """Calls whose correctness is known (with a result; every call in upstream mode)."""
    correct: int
    valid: int

    @property
    def tool_correctness(self) -> float | None:
        """T: share of judged calls whose result is not an error."""
        return self.correct / self.judged_calls if self.judged_calls else None

    @property
    def param_validity(self) -> float | None:
        """P: share of calls with valid arguments."""
        return self.valid / self.calls if self.calls else None

    @property
    def tue(self) -> float | None:
        """0.6 T + 0.4 P (Eq. 2); None when either part is."""
        t, p = self.tool_correctness, self.param_validity
        if t is None or p is None:
            return None
        return TUE_WEIGHTS["tool_correctness"] * t + TUE_WEIGHTS["param_validity"] * p


def tool_usage_efficiency(
    records: Iterable[ToolCallRecord], *, upstream: bool = False
) -> ToolUsage:
    """T, P and TUE over ``records`` (counts summed over conversations).

    ``upstream``: every call is judged (one without a result counts as correct), P always by
    the keyword rule, user-side calls included. By default only assistant calls count, a call
    without a result is left out of T, and P uses the schema when one is known.
    """
    calls = judged = correct = valid = 0
    for record in records:
        if not upstream and record["role"] != "assistant":
            continue
        calls += 1
        if upstream:
            judged += 1
            correct += record["error"] is not True
            valid += record["params_valid_keyword"]
        else:
            judged += record["has_result"]
            correct += record["error"] is False
            valid += record["params_valid"]
    return ToolUsage(calls, judged, correct, valid)
