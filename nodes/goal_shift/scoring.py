"""Nodes of the goal-shift graph (paper 002): one conversation's TUE, TCRR, GSRT and TSR.

``parse_conversation`` -> ``measure_tool_use`` -> ``detect_shifts`` -> ``score_task_success``
-> ``build_result``. Stored LLM-judge outputs (``gsrt_v2``, ``nl_assertions``) are reused when
present and ``Context.reuse_judgments`` is on; otherwise the configured judges answer.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from todeval.evals.goal_shift_schema import Conversation, ToolSchema
from todeval.evals.metrics.goal_shift.recovery import goal_shift_recovery_time, shift_recovery
from todeval.evals.metrics.goal_shift.summary import tool_use_figures
from todeval.evals.metrics.goal_shift.task_success import (
    action_rate,
    communicate_info_rate,
    nl_assertion_rate,
    task_success_rate,
)
from todeval.evals.metrics.goal_shift.tool_redundancy import tool_call_redundancy
from todeval.evals.metrics.goal_shift.tool_use import (
    serves_task,
    tool_call_records,
    tool_usage_efficiency,
)
from todeval.nodes.context import Context, get_context
from todeval.nodes.goal_shift.roles import NL_ASSERTION, SHIFT_DETECTION
from todeval.nodes.goal_shift.settings import GoalShiftSettings
from todeval.nodes.goal_shift.state import GoalShiftState


def _conversation(state: GoalShiftState) -> Conversation:
    return Conversation.model_validate(state["conversation"])


def parse_conversation(state: GoalShiftState) -> dict[str, Any]:
    """Validate the conversation and copy the fields every result row carries."""
    conversation = _conversation(state)
    task = conversation.task
    return {
        "dialogue_id": conversation.dialogue_id,
        "task_id": conversation.task_id,
        "trial": conversation.trial,
        "domain": conversation.domain,
        "persona": conversation.persona,
        "goal_sequence": task.goal_sequence if task else "-",
        "reward": conversation.reward,
        "issues": [issue.model_dump() for issue in conversation.issues],
    }


def measure_tool_use(state: GoalShiftState) -> dict[str, Any]:
    """Tool-call records, TUE (T, P) and TCRR (window, batch) of this conversation."""
    conversation = _conversation(state)
    raw_schemas = state.get("tool_schemas")
    schemas = (
        {name: ToolSchema.model_validate(s) for name, s in raw_schemas.items()}
        if raw_schemas is not None
        else None
    )
    task = conversation.task
    task_tools = task.allowed_tool_names if task else None
    records = tool_call_records(conversation.messages, schemas, task_tools=task_tools)
    usage = tool_usage_efficiency(records)
    served = usage if serves_task(records) else tool_usage_efficiency([])
    figures = tool_use_figures(served, tool_call_redundancy(records), calls=usage.calls)
    return {"tool_calls": records, **figures}


def detect_shifts(state: GoalShiftState, runtime: Runtime[Context]) -> dict[str, Any]:
    """The user's goal shifts and recovery events: stored ``gsrt_v2``, else the judge's."""
    context = get_context(runtime)
    conversation = _conversation(state)
    stored = conversation.stored.shifts
    if GoalShiftSettings.of(context).reuse_judgments and stored is not None:
        return {
            "shifts": [shift_recovery(s) for s in stored],
            "shift_judge": conversation.stored.judge,
            "shift_reason": None,
            "shifts_judged": True,
        }
    detector = SHIFT_DETECTION.judge(context.spec("shift_detection"), context.llm.max_retries)
    verdict = detector.detect(conversation)
    return {
        "shifts": [shift_recovery(s) for s in verdict.shifts or []],
        "shift_judge": verdict.judge,
        "shift_reason": verdict.reason,
        "shifts_judged": verdict.shifts is not None,
    }


def score_task_success(state: GoalShiftState, runtime: Runtime[Context]) -> dict[str, Any]:
    """TSR (Eq. 1) from the three channels; NL assertions stored or judged."""
    context = get_context(runtime)
    conversation = _conversation(state)
    task = conversation.task
    if task is None:
        empty = {"communicate_info": None, "action": None, "nl_assertion": None}
        return {
            "tsr": None,
            "tsr_channels": empty,
            "tsr_weights": {},
            "nl_assertions": [],
            "nl_assertions_total": 0,
        }
    stored = conversation.stored.nl_assertions
    if GoalShiftSettings.of(context).reuse_judgments and stored is not None:
        judgments, judge = stored, conversation.stored.judge
    elif task.nl_assertions:
        judge_nl = NL_ASSERTION.judge(context.spec("nl_assertion"), context.llm.max_retries)
        verdict = judge_nl.judge(conversation)
        judgments, judge = verdict.judgments, verdict.judge
    else:
        judgments, judge = [], None
    said = [m.content for m in conversation.messages if m.role == "assistant"]
    calls = [call for m in conversation.messages for call in m.tool_calls]
    channels = {
        "communicate_info": communicate_info_rate(task.communicate_info, said),
        "action": action_rate(task.action_sets, calls),
        "nl_assertion": nl_assertion_rate(judgments) if task.nl_assertions else None,
    }
    tsr, weights = task_success_rate(channels)
    return {
        "tsr": tsr,
        "tsr_channels": channels,
        "tsr_weights": weights,
        # upstream's action channel: half an action set for the right tool, any arguments
        "action_upstream": action_rate(task.action_sets, calls, upstream=True),
        "nl_assertions": [j.model_dump() for j in judgments],
        # upstream's channel divides by this, not by the judgments (--compat upstream)
        "nl_assertions_total": len(task.nl_assertions),
        "nl_judge": judge,
    }


def build_result(state: GoalShiftState) -> dict[str, Any]:
    """This conversation's GSRT aggregate (shifts, recovery, transfer, median latencies)."""
    return {"gsrt": goal_shift_recovery_time(state.get("shifts") or [])}
