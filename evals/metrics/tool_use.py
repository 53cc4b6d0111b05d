"""Tool Usage Efficiency (paper 002, Eq. 2) and Tool-Call Redundancy Ratio, from tool calls.

Each tool call becomes a :class:`ToolCallRecord` (who called it, in which turn, whether its
result is an error, whether its arguments are valid). TUE = 0.6 T + 0.4 P, with T the share of
calls whose result is not an error and P the share whose arguments satisfy the tool's schema
(required fields present, no unknown fields, JSON types valid when known). Without schemas, P
uses the upstream rule: a call is invalid only when its result is an error whose text names a
parameter problem (:data:`PARAM_ERROR_KEYWORDS`).

TCRR counts a call redundant if the same tool with the same normalised arguments was called in
any of the previous 3 assistant turns of the same conversation (window), or if it is the third
or later identical call within one assistant turn (batch threshold 2). An assistant turn is one
assistant message, as in AgentChangeBench's code. :func:`pooled_tool_call_redundancy`
reproduces that code's computation, which pools every conversation's calls by turn number.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

from evals.goal_shift_schema import Message, ToolSchema

TUE_WEIGHTS: dict[str, float] = {"tool_correctness": 0.6, "param_validity": 0.4}
"""Eq. 2 weights (Appendix B.1)."""

TCRR_WINDOW = 3
"""Previous assistant turns searched for an identical call (Appendix B.1)."""

TCRR_BATCH_THRESHOLD = 2
"""Identical calls allowed within one assistant turn (Appendix B.1)."""

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
    if arguments is None:
        return False
    for name in schema.required:
        if arguments.get(name) is None:
            return False
    for name, value in arguments.items():
        spec = schema.properties.get(name)
        if spec is None:
            if not schema.additional_properties:
                return False
            continue
        if value is None and name not in schema.required:
            continue  # an optional parameter passed as null means "not given"
        if not _type_ok(value, spec.get("type")):
            return False
    return True


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
    messages: Sequence[Message], schemas: Mapping[str, ToolSchema] | None
) -> list[ToolCallRecord]:
    """Every tool call of a transcript, in order, with its result and validity."""
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
            if schemas is None:
                valid = keyword_ok
            else:
                schema = schemas.get(call.name)
                valid = schema is not None and arguments_satisfy_schema(call.arguments, schema)
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
                )
            )
    return records


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
    """T, P and TUE over ``records``.

    Args:
        records: Tool calls (of one conversation or pooled over many: counts are summed).
        upstream: AgentChangeBench's rules: every call is judged (one without a result counts
            as correct), P always by the keyword rule, and user-side calls included. By
            default only assistant calls count, a call without a result is left out of T,
            and P uses the schema when one is known.

    Returns:
        The counts; T, P and TUE are properties.
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


@dataclass(frozen=True)
class Redundancy:
    """Redundant calls by kind over a set of calls."""

    calls: int
    window: int
    batch: int

    @property
    def redundant(self) -> int:
        """Window plus batch redundant calls."""
        return self.window + self.batch

    @property
    def tcrr(self) -> float | None:
        """Redundant calls / calls; None without calls."""
        return self.redundant / self.calls if self.calls else None

    @property
    def tcrr_window(self) -> float | None:
        """Window-redundant calls / calls."""
        return self.window / self.calls if self.calls else None

    @property
    def tcrr_batch(self) -> float | None:
        """Batch-redundant calls / calls."""
        return self.batch / self.calls if self.calls else None

    def __add__(self, other: Redundancy) -> Redundancy:
        return Redundancy(
            self.calls + other.calls, self.window + other.window, self.batch + other.batch
        )


def redundant_calls(
    records: Sequence[ToolCallRecord],
    *,
    window: int = TCRR_WINDOW,
    batch_threshold: int = TCRR_BATCH_THRESHOLD,
) -> list[str | None]:
    """Per call: ``"window"``, ``"batch"`` or None (not redundant).

    A call is window-redundant when its identity occurs in any of the previous ``window``
    assistant turns; otherwise batch-redundant when more than ``batch_threshold`` identical
    calls precede or are it in its own turn. Each call is counted once, window first.
    """
    by_turn: dict[int, set[str]] = defaultdict(set)
    for record in records:
        by_turn[record["assistant_turn"]].add(record["identity"])
    seen_in_turn: Counter[tuple[int, str]] = Counter()
    kinds: list[str | None] = []
    for record in records:
        turn, identity = record["assistant_turn"], record["identity"]
        seen_in_turn[(turn, identity)] += 1
        earlier = any(identity in by_turn.get(t, ()) for t in range(max(1, turn - window), turn))
        excess = seen_in_turn[(turn, identity)] > batch_threshold
        kinds.append("window" if earlier else "batch" if excess else None)
    return kinds


def tool_call_redundancy(records: Sequence[ToolCallRecord]) -> Redundancy:
    """TCRR's counts for one conversation's assistant calls (each call counted once)."""
    own = [record for record in records if record["role"] == "assistant"]
    kinds = redundant_calls(own)
    return Redundancy(len(own), kinds.count("window"), kinds.count("batch"))


def pooled_tool_call_redundancy(conversations: Iterable[Sequence[ToolCallRecord]]) -> Redundancy:
    """AgentChangeBench's TCRR: every conversation's calls pooled and grouped by turn number.

    Calls of different conversations at the same assistant turn index are compared with each
    other, window and batch excess are tallied independently (a call may count in both), and
    user-side calls are included. Only for comparison with published numbers.
    """
    pooled = [record for records in conversations for record in records]
    by_turn: dict[int, list[str]] = defaultdict(list)
    for record in pooled:
        by_turn[record["assistant_turn"]].append(record["identity"])
    window = batch = 0
    for turn, identities in by_turn.items():
        previous = {i for t in range(max(1, turn - TCRR_WINDOW), turn) for i in by_turn.get(t, ())}
        window += sum(1 for identity in identities if identity in previous)
        batch += sum(
            count - TCRR_BATCH_THRESHOLD
            for count in Counter(identities).values()
            if count > TCRR_BATCH_THRESHOLD
        )
    return Redundancy(len(pooled), window, batch)


def tool_use_figures(usage: ToolUsage, redundancy: Redundancy) -> dict[str, float | int | None]:
    """The summary fields of TUE and TCRR (``tue``, ``tool_correctness``, ... ``num_redundant``)."""
    return {
        "tue": usage.tue,
        "tool_correctness": usage.tool_correctness,
        "param_validity": usage.param_validity,
        "num_tool_calls": usage.calls,
        "tcrr": redundancy.tcrr,
        "tcrr_window": redundancy.tcrr_window,
        "tcrr_batch": redundancy.tcrr_batch,
        "num_redundant": redundancy.redundant,
    }
