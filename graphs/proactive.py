"""ProactiveEval (paper 003): data synthesis, its two tasks, and their judge side.

``synthesis_graph`` - one thread per synthesised environment, every stage a node with its own
checkpoint (a stage that fails raises, and running the thread again resumes at it)::

    choose_topic -> generate_environment -> generate_targets -> ensemble_targets
      -> check_difficulty -(a majority finds the target, rounds left)->
             obfuscate_environment (round 1) or inject_noise (later) -> check_difficulty
      -> check_difficulty -(otherwise)-> check_reference -> assign_tier

``plan_scoring_graph`` - a finished target plan -> ``judge_target_plan`` (Listing 11).
``guidance_scoring_graph`` - a finished guidance transcript -> ``judge_guidance`` (Listing 12)
-> ``measure_target_density`` (Listing 13).

``planning_graph`` - the agent under test plans (Listing 4) -> ``judge_target_plan``; a run whose
agent gave no readable plan ends unscored.

``guidance_graph`` - one thread per (environment, agreeableness, run)::

    agent_turn -> user_turn -> check_target -(reached, or 6 turns)-> judge_guidance
      ^                              |                                 -> measure_target_density
      +----------(otherwise)---------+

Every turn is a checkpoint, so a killed dialogue resumes at its last turn.
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict

from todeval.evals.record_views import ProactiveCase
from todeval.nodes.context import Context, get_context
from todeval.nodes.proactive.guidance import (
    agent_turn,
    check_target,
    route_after_agent,
    route_after_check,
    route_after_user,
    user_turn,
)
from todeval.nodes.proactive.planning import plan_target, route_after_plan
from todeval.nodes.proactive.refinement import (
    assign_tier,
    check_difficulty,
    check_reference,
    inject_noise,
    obfuscate_environment,
    route_after_check_difficulty,
)
from todeval.nodes.proactive.scoring import (
    judge_guidance,
    judge_target_plan,
    measure_target_density,
)
from todeval.nodes.proactive.state import (
    GuidanceInput,
    GuidanceOutput,
    GuidanceScoringInput,
    GuidanceScoringOutput,
    GuidanceScoringState,
    GuidanceState,
    PlanningInput,
    PlanningOutput,
    PlanningState,
    PlanScoringInput,
    PlanScoringOutput,
    PlanScoringState,
    SynthesisInput,
    SynthesisOutput,
    SynthesisState,
)
from todeval.nodes.proactive.synthesis import (
    choose_topic,
    ensemble_targets,
    generate_environment,
    generate_targets,
)


def build_synthesis_graph() -> StateGraph[Any, Context, Any, Any]:
    """Topic -> environment -> candidates -> ensemble -> difficulty loop -> final check -> tier."""
    builder = StateGraph(
        SynthesisState,
        context_schema=Context,
        input_schema=SynthesisInput,
        output_schema=SynthesisOutput,
    )
    builder.add_node("choose_topic", choose_topic)
    builder.add_node("generate_environment", generate_environment)
    builder.add_node("generate_targets", generate_targets)
    builder.add_node("ensemble_targets", ensemble_targets)
    builder.add_node("check_difficulty", check_difficulty)
    builder.add_node("obfuscate_environment", obfuscate_environment)
    builder.add_node("inject_noise", inject_noise)
    builder.add_node("check_reference", check_reference)
    builder.add_node("assign_tier", assign_tier)
    builder.add_edge(START, "choose_topic")
    builder.add_edge("choose_topic", "generate_environment")
    builder.add_edge("generate_environment", "generate_targets")
    builder.add_edge("generate_targets", "ensemble_targets")
    builder.add_edge("ensemble_targets", "check_difficulty")
    builder.add_conditional_edges("check_difficulty", route_after_check_difficulty)
    builder.add_edge("obfuscate_environment", "check_difficulty")
    builder.add_edge("inject_noise", "check_difficulty")
    builder.add_edge("check_reference", "assign_tier")
    builder.add_edge("assign_tier", END)
    return builder


def build_plan_scoring_graph() -> StateGraph[Any, Context, Any, Any]:
    """A finished plan -> the target-planning judge."""
    builder = StateGraph(
        PlanScoringState,
        context_schema=Context,
        input_schema=PlanScoringInput,
        output_schema=PlanScoringOutput,
    )
    builder.add_node("judge_target_plan", judge_target_plan)
    builder.add_edge(START, "judge_target_plan")
    builder.add_edge("judge_target_plan", END)
    return builder


def build_guidance_scoring_graph() -> StateGraph[Any, Context, Any, Any]:
    """A finished transcript -> the guidance judge -> target density."""
    builder = StateGraph(
        GuidanceScoringState,
        context_schema=Context,
        input_schema=GuidanceScoringInput,
        output_schema=GuidanceScoringOutput,
    )
    builder.add_node("judge_guidance", judge_guidance)
    builder.add_node("measure_target_density", measure_target_density)
    builder.add_edge(START, "judge_guidance")
    builder.add_edge("judge_guidance", "measure_target_density")
    builder.add_edge("measure_target_density", END)
    return builder


def build_planning_graph() -> StateGraph[Any, Context, Any, Any]:
    """The agent plans -> the target-planning judge (skipped when there is no plan)."""
    builder = StateGraph(
        PlanningState,
        context_schema=Context,
        input_schema=PlanningInput,
        output_schema=PlanningOutput,
    )
    builder.add_node("plan_target", plan_target)
    builder.add_node("judge_target_plan", judge_target_plan)
    builder.add_edge(START, "plan_target")
    builder.add_conditional_edges("plan_target", route_after_plan)
    builder.add_edge("judge_target_plan", END)
    return builder


def build_guidance_graph() -> StateGraph[Any, Context, Any, Any]:
    """Agent <-> simulated user with early stop -> the guidance judge -> target density."""
    builder = StateGraph(
        GuidanceState,
        context_schema=Context,
        input_schema=GuidanceInput,
        output_schema=GuidanceOutput,
    )
    builder.add_node("agent_turn", agent_turn)
    builder.add_node("user_turn", user_turn)
    builder.add_node("check_target", check_target)
    builder.add_node("judge_guidance", judge_guidance)
    builder.add_node("measure_target_density", measure_target_density)
    builder.add_edge(START, "agent_turn")
    builder.add_conditional_edges("agent_turn", route_after_agent)
    builder.add_conditional_edges("user_turn", route_after_user)
    builder.add_conditional_edges("check_target", route_after_check)
    builder.add_edge("judge_guidance", "measure_target_density")
    builder.add_edge("measure_target_density", END)
    return builder


synthesis_graph = build_synthesis_graph().compile(name="proactive_synthesis")
plan_scoring_graph = build_plan_scoring_graph().compile(name="proactive_plan_scoring")
guidance_scoring_graph = build_guidance_scoring_graph().compile(name="proactive_guidance_scoring")
planning_graph = build_planning_graph().compile(name="proactive_planning")
guidance_graph = build_guidance_graph().compile(name="proactive_guidance")


class ProactiveTask(TypedDict):
    """What the evaluation hands ProactiveEval: the environment and the agent's output (JSON)."""

    proactive: dict[str, Any]


def run_proactive(payload: ProactiveTask, runtime: Runtime[Context]) -> dict[str, Any]:
    """The evaluation's ProactiveEval branch: plan and guidance scoring.

    The target-planning judge scores the agent's plan, the guidance judge its dialogue.
    """
    case = ProactiveCase.model_validate(payload["proactive"])
    context = get_context(runtime)
    given = {
        "eval_id": case.eval_id,
        "environment": case.environment.model_dump(),
        "reference": case.reference.model_dump(),
    }
    output: dict[str, Any] = {"plan": None, "guidance": None}
    if case.plan is not None:
        scored = plan_scoring_graph.invoke(
            given | {"domain": case.domain, "plan": case.plan.model_dump()}, context=context
        )
        output["plan"] = {"plan_verdict": scored["plan_verdict"]}
    if case.messages:
        messages = [message.model_dump() for message in case.messages]
        scored = guidance_scoring_graph.invoke(given | {"messages": messages}, context=context)
        output["guidance"] = {k: scored[k] for k in ("guidance_verdict", "density")}
    return {"results": {"proactive": output}}
