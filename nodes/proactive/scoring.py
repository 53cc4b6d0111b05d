"""Judge-side nodes of the two ProactiveEval tasks, over a finished plan or transcript.

Target planning: ``judge_target_plan`` scores an agent's plan against the reference
(Listing 11). Dialogue guidance: ``judge_guidance`` scores the finished conversation (Listing 12)
and ``measure_target_density`` counts the sub-targets per agent message (Listing 13). The agent
and simulated-user nodes that produce the plan and the transcript come before these.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from todeval.evals.proactive_schema import ChatMessage, Environment, TargetPlan
from todeval.nodes.context import Context, get_context
from todeval.nodes.proactive.roles import GUIDANCE_JUDGE, TARGET_DENSITY, TARGET_PLANNING_JUDGE
from todeval.nodes.proactive.state import GuidanceScoringState, PlanScoringState

GUIDANCE_MAX_TURNS = 6
"""The paper's turn limit in dialogue guidance (a dialogue ending earlier reached the target)."""


def judge_target_plan(state: PlanScoringState, runtime: Runtime[Context]) -> dict[str, Any]:
    """The target-planning judge's verdict on the plan."""
    context = get_context(runtime)
    judge = TARGET_PLANNING_JUDGE.judge(context.spec("target_planning"), context.llm.max_retries)
    verdict = judge.judge(
        state["domain"],
        Environment.model_validate(state["environment"]),
        TargetPlan.model_validate(state["reference"]),
        TargetPlan.model_validate(state["plan"]),
    )
    return {"plan_verdict": verdict.as_dict()}


def judge_guidance(state: GuidanceScoringState, runtime: Runtime[Context]) -> dict[str, Any]:
    """The guidance judge's verdict on the finished conversation."""
    context = get_context(runtime)
    judge = GUIDANCE_JUDGE.judge(context.spec("guidance"), context.llm.max_retries)
    verdict = judge.judge(
        Environment.model_validate(state["environment"]),
        TargetPlan.model_validate(state["reference"]),
        [ChatMessage.model_validate(m) for m in state["messages"]],
        max_turns=state.get("max_turns", GUIDANCE_MAX_TURNS),
    )
    return {"guidance_verdict": verdict.as_dict()}


def measure_target_density(
    state: GuidanceScoringState, runtime: Runtime[Context]
) -> dict[str, Any]:
    """Sub-targets per agent message, and the target and initiation densities."""
    context = get_context(runtime)
    judge = TARGET_DENSITY.judge(context.spec("target_density"), context.llm.max_retries)
    reference = TargetPlan.model_validate(state["reference"])
    agent = [m["content"] for m in state["messages"] if m.get("role") == "assistant"]
    verdict = judge.count(reference.sub_target, agent)
    return {
        "density": {
            "judge": verdict.judge,
            "counts": verdict.counts,
            "covered": verdict.covered,
            "reasons": verdict.reasons,
            "target_density": verdict.target_density,
            "initiation_density": verdict.initiation_density,
        }
    }
