"""Nodes of the synthesis graph, second stage: difficulty check, refinement, final check, tier.

Paper 003, Figure 2(b) and "Environment Refinement": a panel of reasoners each predicts the
target and a matcher counts how many predictions convey the reference's meaning. While a
majority still finds it, the environment is refined - todeval's reading: the first round is the
obfuscation rewrite (Listings 6-7), later rounds inject noise (Listings 8-9) - for at most
``max_refinements`` rounds. A final-check panel then keeps the item when a majority judges the
reference the best target (Listing 10). Tiers follow the last difficulty check: Hard when no
member found the target, Fair when a minority did (with three members: exactly one, as in the
paper), ``eval`` when a majority still did after the last round.
"""

from __future__ import annotations

from typing import Any, Literal

from langgraph.runtime import Runtime

from todeval.evals.proactive_schema import Environment, ProactiveItem, TargetPlan
from todeval.nodes.context import Context, get_context
from todeval.nodes.proactive.roles import (
    DIFFICULTY_JUDGE,
    FINAL_CHECK,
    TARGET_PREDICTION,
)
from todeval.nodes.proactive.settings import ProactiveSettings
from todeval.nodes.proactive.state import SynthesisState
from todeval.nodes.proactive.synthesis import StageFailed, synthesis_writer


def majority(yes: int, answered: int) -> bool:
    """More than half of the members that answered."""
    return answered > 0 and 2 * yes > answered


def check_difficulty(state: SynthesisState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Each panel member predicts the target; the matcher counts the hits."""
    context = get_context(runtime)
    environment = Environment.model_validate(state["environment"])
    reference = TargetPlan.model_validate(state["reference"])
    predictions: list[dict[str, Any]] = []
    for spec in context.specs("target_prediction"):
        result = TARGET_PREDICTION.judge(spec, context.llm.max_retries).predict(
            state["domain"], environment
        )
        target = result.value.target if result.value is not None else None
        predictions.append({"judge": spec, "target": target, "reason": result.reason})
    answered = [p for p in predictions if p["target"]]
    matcher = DIFFICULTY_JUDGE.judge(context.spec("difficulty"), context.llm.max_retries)
    matched = matcher.matches(reference.target, [p["target"] for p in answered])
    if matched.value is None:
        raise StageFailed(f"difficulty check: {matched.reason or 'the matcher gave no answer'}")
    for prediction, match in zip(answered, matched.value, strict=True):
        prediction["match"] = match
    hits = sum(matched.value)
    rounds = state.get("rounds", 0)
    entry = {
        "round": rounds,
        "after": "generation" if rounds == 0 else ("obfuscation" if rounds == 1 else "noise"),
        "hits": hits,
        "answered": len(answered),
        "predictions": predictions,
        "matcher": {"judge": matcher.name, "reason": matched.reason},
    }
    # Refine while a majority still finds the target and rounds remain.
    refine = (
        majority(hits, len(answered)) and rounds < ProactiveSettings.of(context).max_refinements
    )
    next_step = ("obfuscation" if rounds == 0 else "noise") if refine else None
    judges = {
        "difficulty_panel": list(context.specs("target_prediction")),
        "difficulty_judge": matcher.name,
    }
    return {
        "hits": hits,
        "difficulty_log": [entry],
        "next_refinement": next_step,
        "judges": judges,
    }


def route_after_check_difficulty(
    state: SynthesisState,
) -> Literal["obfuscate_environment", "inject_noise", "check_reference"]:
    """The refinement ``check_difficulty`` chose, or the final check."""
    step = state.get("next_refinement")
    if step == "obfuscation":
        return "obfuscate_environment"
    return "inject_noise" if step == "noise" else "check_reference"


def obfuscate_environment(state: SynthesisState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Both fields rewritten as concrete, observable behaviour (Listings 6-7)."""
    writer = synthesis_writer(runtime)
    result = writer.obfuscate(
        state["domain"],
        Environment.model_validate(state["environment"]),
        state["reference"]["target"],
        state.get("blueprint"),
    )
    if result.value is None:
        raise StageFailed(f"obfuscation rewrite: {result.reason or 'no answer'}")
    return {"environment": result.value.model_dump(), "rounds": state.get("rounds", 0) + 1}


def inject_noise(state: SynthesisState, runtime: Runtime[Context]) -> dict[str, Any]:
    """3-4 plausible, irrelevant sentences around each field's original content (L8-9)."""
    writer = synthesis_writer(runtime)
    rounds = state.get("rounds", 0)
    result = writer.inject_noise(
        state["domain"],
        Environment.model_validate(state["environment"]),
        state["reference"]["target"],
        state["seed"] * 31 + rounds,  # a new draw of noise each round
    )
    if result.value is None:
        raise StageFailed(f"noise injection: {result.reason or 'no answer'}")
    return {"environment": result.value.model_dump(), "rounds": rounds + 1}


def check_reference(state: SynthesisState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Each final-check member judges whether the reference is the best target (Listing 10)."""
    context = get_context(runtime)
    environment = Environment.model_validate(state["environment"])
    reference = TargetPlan.model_validate(state["reference"])
    votes = []
    for spec in context.specs("final_check"):
        result = FINAL_CHECK.judge(spec, context.llm.max_retries).check(
            state["domain"], environment, reference
        )
        votes.append({"judge": spec, "best": result.value, "reason": result.reason})
    answered = [v for v in votes if v["best"] is not None]
    accepted = majority(sum(bool(v["best"]) for v in answered), len(answered))
    return {
        "final_votes": votes,
        "accepted": accepted,
        "judges": {"final_check_panel": list(context.specs("final_check"))},
    }


def assign_tier(state: SynthesisState) -> dict[str, Any]:
    """The release item and its tier, or no item when the final check rejected it."""
    if not state.get("accepted"):
        return {"item": None, "tier": None}
    last = state["difficulty_log"][-1]
    hits, answered = last["hits"], last["answered"]
    tier = "hard" if hits == 0 else "eval" if majority(hits, answered) else "fair"
    environment = Environment.model_validate(state["environment"])
    reference = TargetPlan.model_validate(state["reference"])
    item = ProactiveItem(
        eval_id=state["seed_id"],
        domain=state["domain"],
        tier=tier,
        environment=environment,
        target=reference.target,
        sub_target=reference.sub_target,
        topic=state.get("topic"),
    )
    return {"item": item.release_item(), "tier": tier}
