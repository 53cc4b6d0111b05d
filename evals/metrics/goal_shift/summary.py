"""AgentChangeBench aggregates: TSR, TUE, TCRR, GSRT and pass^k over a run, with breakdowns.

Each conversation's result is a row (see :func:`goal_shift_summary`). Rates over several
conversations are pooled the way the paper's Table 10 reports them: TUE and TCRR over all tool
calls (``Redun./Calls``; TUE only over the conversations with a call that serves the task,
``tue_not_applicable`` counts the others), GSRT over all shifts, TSR and its channels as means
over the conversations that have them. ``compat="upstream"`` swaps in AgentChangeBench's own rules
(TCRR pooled across conversations by turn number, T counting calls without a result as correct,
P by the keyword rule, the nl_assertion channel over all the task's assertions) to compare with
published numbers. Every breakdown (domain, persona, task, goal sequence) is given pooled per
group and, in ``macro``, as the unweighted mean over its groups
(:mod:`evals.metrics.goal_shift.macro`).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from statistics import fmean
from typing import Any, Literal

from todeval.evals.metrics.goal_shift.macro import macro_average
from todeval.evals.metrics.goal_shift.recovery import goal_shift_recovery_time
from todeval.evals.metrics.goal_shift.task_success import (
    TSR_CHANNELS,
    nl_assertion_counts,
    upstream_task_success,
)
from todeval.evals.metrics.goal_shift.tool_redundancy import (
    Redundancy,
    pooled_tool_call_redundancy,
    tool_call_redundancy,
)
from todeval.evals.metrics.goal_shift.tool_use import (
    ToolCallRecord,
    ToolUsage,
    parameter_validity_differences,
    serves_task,
    tool_usage_efficiency,
    tue_not_applicable,
)

Compat = Literal["none", "upstream"]

BREAKDOWNS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "by_domain": lambda row: str(row.get("domain") or "unknown"),
    "by_persona": lambda row: str(row.get("persona") or "unknown"),
    "by_task": lambda row: str(row["task_id"]),
    "by_goal_sequence": lambda row: str(row.get("goal_sequence") or "-"),
}
"""The paper's breakdowns (Section 4.3: macro-averages across tasks and personas)."""

NL_RULES: dict[Compat, str] = {
    "none": "met / decided assertions (undecided ones left out)",
    "upstream": "met / all the task's assertions (undecided ones count as not met)",
}
"""How the nl_assertion channel is computed under each compat mode."""

SUCCESS_TOLERANCE = 1e-6


def pass_hat_k(num_trials: int, successes: int, k: int) -> float:
    """pass^k: the chance that k trials drawn from ``num_trials`` all succeed (tau-bench).

    Raises:
        ValueError: If ``k`` is not in 1..num_trials.
    """
    if not 1 <= k <= num_trials:
        raise ValueError(f"k={k} needs 1 <= k <= number of trials ({num_trials})")
    return math.comb(successes, k) / math.comb(num_trials, k)


def succeeded(row: Mapping[str, Any]) -> bool | None:
    """A trial succeeds when its reward is 1 (the run's own reward, else our TSR)."""
    value = row.get("reward")
    if value is None:
        value = row.get("tsr")
    return None if value is None else abs(float(value) - 1.0) <= SUCCESS_TOLERANCE


def pass_hat_ks(rows: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """pass^k for k = 1..(fewest trials of any task), averaged over tasks."""
    by_task: dict[str, list[bool]] = defaultdict(list)
    for row in rows:
        outcome = succeeded(row)
        if outcome is not None:
            by_task[str(row["task_id"])].append(outcome)
    if not by_task:
        return {}
    max_k = min(len(trials) for trials in by_task.values())
    return {
        str(k): fmean(pass_hat_k(len(t), sum(t), k) for t in by_task.values())
        for k in range(1, max_k + 1)
    }


def _mean(values: Sequence[float | None]) -> float | None:
    present = [float(v) for v in values if v is not None]
    return fmean(present) if present else None


def tool_use_figures(
    usage: ToolUsage, redundancy: Redundancy, *, calls: int | None = None
) -> dict[str, float | int | None]:
    """The summary fields of TUE and TCRR (``tue``, ``tool_correctness``, ... ``num_redundant``).

    ``calls``: every call counted (``usage`` may hold only the conversations whose calls serve
    the task, :func:`~evals.metrics.goal_shift.tool_use.serves_task`); default ``usage``'s.
    """
    return {
        "tue": usage.tue,
        "tool_correctness": usage.tool_correctness,
        "param_validity": usage.param_validity,
        "num_tool_calls": usage.calls if calls is None else calls,
        "tcrr": redundancy.tcrr,
        "tcrr_window": redundancy.tcrr_window,
        "tcrr_batch": redundancy.tcrr_batch,
        "num_redundant": redundancy.redundant,
    }


def goal_shift_summary(
    rows: Sequence[Mapping[str, Any]], *, compat: Compat = "none", breakdowns: bool = True
) -> dict[str, Any]:
    """Every summary figure over conversation rows.

    Args:
        rows: One per conversation: ``task_id``, ``tsr``, ``tsr_channels``, ``tool_calls``,
            ``shifts``, ``reward``, and ``domain``/``persona``/``goal_sequence``.
        compat: ``"upstream"`` for AgentChangeBench's own tool metrics (module docstring).
        breakdowns: Add ``by_domain``, ``by_persona``, ``by_task``, ``by_goal_sequence``,
            their ``macro`` averages and the upstream parameter-validity comparison.
    """
    upstream = compat == "upstream"
    if upstream:
        rows = [upstream_task_success(row) for row in rows]
    calls: list[Sequence[ToolCallRecord]] = [row.get("tool_calls") or [] for row in rows]
    usage = tool_usage_efficiency((r for c in calls for r in c), upstream=upstream)
    # TUE over the conversations with a call that serves the task (upstream: every call)
    served = (
        usage if upstream else tool_usage_efficiency(r for c in calls if serves_task(c) for r in c)
    )
    if upstream:
        redundancy = pooled_tool_call_redundancy(calls)
    else:
        redundancy = sum((tool_call_redundancy(c) for c in calls), Redundancy(0, 0, 0))
    summary: dict[str, Any] = {
        "conversations": len(rows),
        "tsr": _mean([row.get("tsr") for row in rows]),
        "tsr_channels": {
            name: _mean([(row.get("tsr_channels") or {}).get(name) for row in rows])
            for name in TSR_CHANNELS
        },
        **tool_use_figures(served, redundancy, calls=usage.calls),
        "tue_not_applicable": tue_not_applicable(calls) if not upstream else 0,
        "gsrt": goal_shift_recovery_time(s for row in rows for s in row.get("shifts") or []),
        "pass_hat_k": pass_hat_ks(rows),
        "nl_assertions": nl_assertion_counts(rows) | {"rule": NL_RULES[compat]},
    }
    if breakdowns:
        summary["macro"] = {}
        for name, key in BREAKDOWNS.items():
            groups: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
            for row in rows:
                groups[key(row)].append(row)
            summary[name] = {
                group: goal_shift_summary(members, compat=compat, breakdowns=False)
                for group, members in sorted(groups.items())
            }
            summary["macro"][name] = macro_average(summary[name])
        keyword = tool_usage_efficiency((r for c in calls for r in c), upstream=True)
        summary["param_validity_upstream"] = keyword.param_validity
        summary["param_validity_differences"] = parameter_validity_differences(rows)
    return summary


def retention_drop(
    clean: Mapping[str, Any], shifted: Mapping[str, Any], metrics: Sequence[str] = ("tsr", "tue")
) -> dict[str, dict[str, float | None]]:
    """Robustness to goal shifts: per metric, retention = shifted / clean, drop = clean - shifted.

    A part is None when a value is missing (retention also when the clean value is 0).
    """
    out: dict[str, dict[str, float | None]] = {}
    for metric in metrics:
        before, after = clean.get(metric), shifted.get(metric)
        retention = drop = None
        if before is not None and after is not None:
            drop = before - after
            retention = after / before if before else None
        out[metric] = {"clean": before, "shifted": after, "retention": retention, "drop": drop}
    return out
