"""Nodes of the synthesis graph, first stage: topic, environment, candidate targets, ensemble.

Paper 003, Figure 2(a): a topic tree guides environment generation; n candidate targets are
sampled at high temperature and synthesised into the reference by a target ensemble. Each node
is one stage with its own checkpoint. A stage whose writer gives no answer raises
:class:`StageFailed`: the thread stops *at* that stage, and running it again resumes there (the
earlier stages are not redone; the LLM cache answers any call that was answered).
"""

from __future__ import annotations

import random
from typing import Any

from langgraph.runtime import Runtime

from todeval.evals.proactive_schema import Environment, TargetPlan
from todeval.nodes.context import Context, get_context
from todeval.nodes.proactive.judges.synthesis_writer import SynthesisWriter
from todeval.nodes.proactive.roles import SYNTHESIS_WRITER
from todeval.nodes.proactive.settings import ProactiveSettings
from todeval.nodes.proactive.state import SynthesisState

TOPIC_DEPTH = 2
"""Levels below the domain: domain -> sub-topic -> leaf (the leaf names the environment)."""

TOPIC_BRANCHING = 4
"""Sub-topics asked for per parent (Listing 2's ``n``)."""


class StageFailed(RuntimeError):
    """A synthesis stage got no usable answer; the thread can be resumed at that stage."""


def synthesis_writer(runtime: Runtime[Context] | None) -> SynthesisWriter:
    """The run's writer (``Context.synthesis_writer``, candidates at its sampling temperature)."""
    context = get_context(runtime)
    return SYNTHESIS_WRITER.judge(
        context.spec("synthesis_writer"),
        context.llm.max_retries,
        temperature=ProactiveSettings.of(context).synthesis_temperature,
    )


def choose_topic(state: SynthesisState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Walk the topic tree from the domain to a leaf, one seeded choice per level (Listing 2)."""
    writer = synthesis_writer(runtime)
    domain, path = state["domain"], [state["domain"]]
    for level in range(TOPIC_DEPTH):
        result = writer.sub_topics(domain, path[-1], TOPIC_BRANCHING)
        if not result.value:
            raise StageFailed(f"topic tree at {path[-1]!r}: {result.reason or 'no sub-topics'}")
        path.append(random.Random(f"{state['seed']}:{domain}:topic:{level}").choice(result.value))
    return {"topic_path": path, "topic": path[-1], "judges": {"synthesis_writer": writer.name}}


def generate_environment(state: SynthesisState, runtime: Runtime[Context]) -> dict[str, Any]:
    """One environment for the topic (Listing 3)."""
    result = synthesis_writer(runtime).environment(
        state["domain"], state["topic_path"], state["seed"]
    )
    if result.value is None:
        raise StageFailed(f"environment generation: {result.reason or 'no answer'}")
    return {
        "environment": result.value.environment.model_dump(),
        "blueprint": result.value.blueprint,
    }


def generate_targets(state: SynthesisState, runtime: Runtime[Context]) -> dict[str, Any]:
    """N candidate targets, sampled independently at high temperature (Listing 4)."""
    context = get_context(runtime)
    result = synthesis_writer(runtime).targets(
        state["domain"],
        Environment.model_validate(state["environment"]),
        state.get("blueprint"),
        ProactiveSettings.of(context).synthesis_candidates,
        state["seed"],
    )
    if not result.value:
        raise StageFailed(f"target generation: {result.reason or 'no candidates'}")
    return {"candidates": [plan.model_dump() for plan in result.value]}


def ensemble_targets(state: SynthesisState, runtime: Runtime[Context]) -> dict[str, Any]:
    """The candidates synthesised into the reference target (Listing 5)."""
    result = synthesis_writer(runtime).ensemble(
        state["domain"],
        Environment.model_validate(state["environment"]),
        [TargetPlan.model_validate(c) for c in state["candidates"]],
    )
    if result.value is None:
        raise StageFailed(f"target ensemble: {result.reason or 'no answer'}")
    return {
        "reference": result.value.plan.model_dump(),
        "ensemble_analysis": result.value.analysis,
        "rounds": 0,
    }
