"""State of the ProactiveEval graphs (paper 003): data synthesis and the judge-side scoring.

Kept below ``graphs/`` so the nodes can import their own state types (imports point down).
Environments and plans travel as JSON (``model_dump``) so every checkpoint is plain data.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, NotRequired

from typing_extensions import TypedDict


class SynthesisInput(TypedDict):
    """One environment to synthesise: its id, domain and seed."""

    seed_id: str
    domain: str
    seed: int


class SynthesisOutput(TypedDict, total=False):
    """What one synthesis thread produced.

    ``item`` is the release item (``id``, ``environment``, ``target``, ``sub_target``,
    ``topic``) when the final check kept it; ``tier`` is ``hard`` (no panel member found the
    target), ``fair`` (a minority did) or ``eval`` (a majority still did after the last round).
    """

    seed_id: str
    domain: str
    topic: str
    topic_path: list[str]
    item: dict[str, Any] | None
    tier: str | None
    accepted: bool
    hits: int
    rounds: int
    difficulty_log: list[dict[str, Any]]
    final_votes: list[dict[str, Any]]
    ensemble_analysis: str
    judges: dict[str, Any]


class SynthesisState(SynthesisInput, total=False):
    """Everything the synthesis nodes read and write."""

    topic: str
    topic_path: list[str]
    environment: dict[str, Any]
    blueprint: dict[str, Any] | None
    candidates: list[dict[str, Any]]
    reference: dict[str, Any]
    ensemble_analysis: str
    difficulty_log: Annotated[list[dict[str, Any]], operator.add]
    hits: int
    rounds: int
    next_refinement: str | None
    final_votes: list[dict[str, Any]]
    accepted: bool
    tier: str | None
    item: dict[str, Any] | None
    judges: Annotated[dict[str, Any], operator.or_]


class PlanScoringInput(TypedDict):
    """A finished target plan and the environment it was made for."""

    eval_id: str
    domain: str
    environment: dict[str, Any]
    reference: dict[str, Any]
    plan: dict[str, Any]


class PlanScoringOutput(TypedDict):
    """The target-planning judge's verdict (``PlanVerdict.as_dict()``)."""

    eval_id: str
    plan_verdict: dict[str, Any]


class PlanScoringState(PlanScoringInput, total=False):
    """Everything the plan-scoring nodes read and write."""

    plan_verdict: dict[str, Any]


class GuidanceScoringInput(TypedDict):
    """A finished guidance dialogue (the agent opens) and its environment and reference."""

    eval_id: str
    environment: dict[str, Any]
    reference: dict[str, Any]
    messages: list[dict[str, Any]]
    max_turns: NotRequired[int]


class GuidanceScoringOutput(TypedDict):
    """The guidance judge's verdict and the target densities."""

    eval_id: str
    guidance_verdict: dict[str, Any]
    density: dict[str, Any]


class GuidanceScoringState(GuidanceScoringInput, total=False):
    """Everything the guidance-scoring nodes read and write."""

    guidance_verdict: dict[str, Any]
    density: dict[str, Any]


class PlanningInput(TypedDict):
    """One target-planning run: an environment, its reference and the agent under test."""

    eval_id: str
    domain: str
    environment: dict[str, Any]
    reference: dict[str, Any]
    agent: str
    run: int


class PlanningOutput(TypedDict, total=False):
    """The agent's plan (None with ``plan_error`` when it gave none) and the judge's verdict."""

    eval_id: str
    plan: dict[str, Any] | None
    agent_reply: str | None
    plan_error: str | None
    plan_verdict: dict[str, Any] | None


class PlanningState(PlanningInput, total=False):
    """Everything the planning nodes read and write."""

    plan: dict[str, Any] | None
    agent_reply: str | None
    plan_error: str | None
    plan_verdict: dict[str, Any] | None


class GuidanceInput(TypedDict):
    """One dialogue-guidance run: environment, reference, agent, the user's tier and seed."""

    eval_id: str
    domain: str
    environment: dict[str, Any]
    reference: dict[str, Any]
    agent: str
    agreeableness: str
    seed: int
    max_turns: NotRequired[int]


class GuidanceOutput(TypedDict, total=False):
    """The dialogue, why it stopped, every check, and the judges' verdicts."""

    eval_id: str
    messages: list[dict[str, Any]]
    turns: int
    reached: bool
    stop_reason: str
    user_acts: list[dict[str, Any]]
    checks: list[dict[str, Any]]
    guidance_verdict: dict[str, Any]
    density: dict[str, Any]


class GuidanceState(GuidanceInput, total=False):
    """Everything the guidance nodes read and write (``messages`` grows one message a node)."""

    messages: Annotated[list[dict[str, Any]], operator.add]
    raised: Annotated[list[list[int]], operator.add]
    user_acts: Annotated[list[dict[str, Any]], operator.add]
    checks: Annotated[list[dict[str, Any]], operator.add]
    resisted: int
    turns: int
    reached: bool
    stop_reason: str
    guidance_verdict: dict[str, Any]
    density: dict[str, Any]
