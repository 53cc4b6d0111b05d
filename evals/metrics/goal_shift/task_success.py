"""Task Success Rate (paper 002, Eq. 1) and its three evaluation channels.

TSR = 0.25 * communicate_info_rate + 0.45 * action_rate + 0.30 * nl_assertion_rate. A channel a
task does not have (no required strings, no action sets, no assertions), or one no judge could
score, is dropped and the remaining weights are renormalised to sum to 1, as AgentChangeBench's
own code does.

The nl_assertion channel is the share of *decided* assertions met; AgentChangeBench's code
divides by all the task's assertions instead (:func:`upstream_nl_assertion_rate`, used under
``--compat upstream`` through :func:`upstream_task_success`). The action channel gives half an
action set for the right tool only when some expected argument matches; AgentChangeBench's code
gives it for any arguments (kept as the row's ``action_upstream`` for ``--compat upstream``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from todeval.evals.goal_shift_schema import ActionSet, NLAssertionJudgment, ToolCall

TSR_WEIGHTS: dict[str, float] = {"communicate_info": 0.25, "action": 0.45, "nl_assertion": 0.30}
"""Channel weights of Eq. 1 (Appendix B.1)."""

TSR_CHANNELS: tuple[str, ...] = ("communicate_info", "action", "nl_assertion")


def communicate_info_rate(required: Sequence[str], assistant_texts: Iterable[str]) -> float | None:
    """Share of required strings found in what the assistant said (case-blind); None if none."""
    if not required:
        return None
    return sum(communicate_info_checks(required, assistant_texts)) / len(required)


def communicate_info_checks(required: Sequence[str], assistant_texts: Iterable[str]) -> list[bool]:
    """Per required string, whether the assistant said it (case-insensitive substring)."""
    said = " ".join(assistant_texts).lower()
    return [item.lower() in said for item in required]


def params_match(arguments: Mapping[str, Any] | None, expected: Mapping[str, Any]) -> bool:
    """Every expected parameter is present with an equal value (extra arguments are fine)."""
    if not expected:
        return True
    if arguments is None:
        return False
    return all(key in arguments and arguments[key] == value for key, value in expected.items())


def action_rate(
    action_sets: Sequence[ActionSet], calls: Sequence[ToolCall], *, upstream: bool = False
) -> float | None:
    """Mean action-set score; None when the task has no action sets.

    Per allowed tool, the tool's first call scores 1 when all expected parameters match and
    0.5 when only some do (:func:`action_set_scores`); an action set takes its best allowed tool.
    """
    if not action_sets:
        return None
    return sum(action_set_scores(action_sets, calls, upstream=upstream)) / len(action_sets)


def params_partly_match(arguments: Mapping[str, Any] | None, expected: Mapping[str, Any]) -> bool:
    """At least one expected parameter is present with an equal value."""
    if arguments is None:
        return False
    return any(key in arguments and arguments[key] == value for key, value in expected.items())


def action_set_scores(
    action_sets: Sequence[ActionSet], calls: Sequence[ToolCall], *, upstream: bool = False
) -> list[float]:
    """Each action set's score under :func:`action_rate`'s rule (0, 0.5 or 1), in order.

    The tool's first call scores 1 when every expected parameter matches. AgentChangeBench's
    code gives 0.5 for calling the right tool whatever its arguments (``upstream``); tau2
    gives nothing short of a full match. Here the half is earned only when some expected
    parameter matches, so the right tool with made-up arguments earns 0 (issue 29).
    """
    first_call: dict[str, ToolCall] = {}
    for call in calls:
        first_call.setdefault(call.name, call)
    scores = []
    for action in action_sets:
        best = 0.0
        for tool in action.allowed_tools:
            first = first_call.get(tool.function_name)
            if first is None:
                continue
            if params_match(first.arguments, tool.params):
                best = 1.0
            elif upstream or params_partly_match(first.arguments, tool.params):
                best = max(best, 0.5)
        scores.append(best)
    return scores


def nl_assertion_rate(judgments: Sequence[NLAssertionJudgment]) -> float | None:
    """Share of judged assertions met (``None`` ones left out); None when nothing was judged."""
    judged = [j.met for j in judgments if j.met is not None]
    return sum(judged) / len(judged) if judged else None


def upstream_nl_assertion_rate(met: Sequence[bool | None], total: int) -> float | None:
    """AgentChangeBench's nl_assertion channel: assertions met / all the task's assertions.

    An undecided assertion counts as not met; when none was decided, upstream drops the
    channel, so this is None too.
    """
    if total <= 0 or all(value is None for value in met):
        return None
    return sum(1 for value in met if value is True) / total


def upstream_task_success(row: Mapping[str, Any]) -> dict[str, Any]:
    """A conversation row with TSR and its nl_assertion channel under upstream's denominator.

    The action channel takes the row's ``action_upstream`` (upstream's 0.5 for the right tool
    whatever its arguments) when the row has it; communicate_info is the same under both
    rules. Only the row's ``tsr``, ``tsr_channels``, ``tsr_weights`` change.
    ``nl_assertions_total`` (the task's count) is on rows since it was added; older rows fall
    back to their judgments' count.
    """
    judgments = row.get("nl_assertions") or []
    total = row.get("nl_assertions_total", len(judgments))
    if not total and "action_upstream" not in row:
        return dict(row)  # no assertions (or no task): both rules agree
    channels = dict(row.get("tsr_channels") or {})
    if total:
        met = [j.get("met") for j in judgments]
        channels["nl_assertion"] = upstream_nl_assertion_rate(met, total)
    if "action_upstream" in row:
        channels["action"] = row["action_upstream"]
    tsr, weights = task_success_rate(channels)
    return {**row, "tsr": tsr, "tsr_channels": channels, "tsr_weights": weights}


def nl_assertion_counts(rows: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """The task assertions of the rows: how many there are and how many were met / undecided.

    ``undecided`` are left out of the channel by default and count as not met upstream.
    """
    total = met = undecided = 0
    for row in rows:
        judgments = row.get("nl_assertions") or []
        count = row.get("nl_assertions_total", len(judgments))
        total += count
        met += sum(1 for j in judgments if j.get("met") is True)
        decided = sum(1 for j in judgments if j.get("met") is not None)
        undecided += max(count - decided, 0)
    return {"total": total, "met": met, "undecided": undecided}


def task_success_rate(
    channels: Mapping[str, float | None], weights: Mapping[str, float] | None = None
) -> tuple[float | None, dict[str, float]]:
    """Eq. 1 over the channels that have a value, weights renormalised: ``(tsr, weights_used)``."""
    chosen = weights or TSR_WEIGHTS
    active = {name: chosen[name] for name in TSR_CHANNELS if channels.get(name) is not None}
    total = sum(active.values())
    if total <= 0:
        return None, {}
    used = {name: weight / total for name, weight in active.items()}
    return sum(used[name] * float(channels[name] or 0.0) for name in used), used
