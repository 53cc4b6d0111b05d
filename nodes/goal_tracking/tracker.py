"""Nodes of the goal-tracker graph: ATOD's turn-level pipeline (paper 000, §5.2).

Per utterance: ``extract_goals`` -> ``check_existence`` -> ``update_memory`` (update the matched
goal or insert the new one and evolve its links, then apply the utterance's status cue), and
``proactive_audit`` every ``audit_every`` utterances and at the end. The local status update
(:mod:`nodes.goal_tracking.status_update`) reads the dialogue's own evidence: the system's acts
and the user's explicit words. The goal memory (D_sym in SQLite, D_vec in Chroma, the
dependency graph) lives in :class:`stores.goal_memory.GoalMemory`; the graph state keeps its
snapshot after every utterance, and ``sync_memory`` restores the store from that snapshot when a
run resumes, so a turn that never reached its checkpoint leaves no trace.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Mapping
from typing import Any, Literal

from langgraph.runtime import Runtime

from evals.datasets.sgd_schema import is_transactional
from nodes.context import Context, get_context
from nodes.goal_tracking.judges.goal_extraction import goal_extractor
from nodes.goal_tracking.judges.goal_extraction.local_stages import (
    check_existence,
    final_audit,
    same_key,
)
from nodes.goal_tracking.judges.goal_extraction.role import Utterance
from nodes.goal_tracking.llm_steps import add_cost, llm_audit, llm_candidates, llm_links, uses_llm
from nodes.goal_tracking.local_steps import (
    evolve_links,
    parent_for,
    rename_by_evidence,
    said_so_far,
    schema_for,
    service_evidence,
)
from nodes.goal_tracking.state import GoalTrackingState
from nodes.goal_tracking.status_update import affirmed, answered, apply_status_cue
from stores.goal_memory import Goal, GoalMemory

LOCAL = "local"


@functools.lru_cache(maxsize=8)
def goal_memory(path: str | None, backend: str) -> GoalMemory:
    """One goal memory per (file, backend) in this process."""
    return GoalMemory(path, vector_backend="memory" if backend == "memory" else "chroma")


def _memory(context: Context) -> GoalMemory:
    return goal_memory(context.goal_memory_path, context.vector_backend)


def _now_ms() -> float:
    return time.perf_counter() * 1000.0


def append_utterances(state: GoalTrackingState) -> dict[str, Any]:
    """Number the new utterances and add them to the history (online: usually one)."""
    history = list(state.get("history", []))
    for item in state.get("utterances", []):
        speaker = str(item["speaker"]).upper()
        speaker = "SYSTEM" if speaker in {"SYSTEM", "ASSISTANT", "AGENT", "S"} else "USER"
        history.append({"turn": len(history) + 1, "speaker": speaker, "text": str(item["text"])})
    return {"history": history, "utterances": [], "cursor": state.get("cursor", 0)}


def sync_memory(state: GoalTrackingState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Make the store hold exactly the checkpointed snapshot (undoes an unfinished turn)."""
    memory = _memory(get_context(runtime))
    snapshot = state.get("goals", [])
    if memory.snapshot(state["dialogue_id"]) != snapshot:
        memory.restore(state["dialogue_id"], snapshot)
    return {}


# Routers take a plain mapping: LangGraph evaluates their type hints when the graph is built.
def route_next(state: Mapping[str, Any]) -> Literal["extract_goals", "proactive_audit", "__end__"]:
    """Another utterance to process, the closing audit, or done."""
    if state["cursor"] < len(state["history"]):
        return "extract_goals"
    if state.get("final") and not state.get("audited_final"):
        return "proactive_audit"
    return "__end__"


def extract_goals(state: GoalTrackingState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Stage 0: candidate goals of the current utterance (user requests; none for the system)."""
    context = get_context(runtime)
    started = _now_ms()
    current = state["history"][state["cursor"]]
    utterance = Utterance(current["turn"], current["speaker"], current["text"])
    window = state["history"][max(0, state["cursor"] - 4) : state["cursor"]]
    recent = [Utterance(u["turn"], u["speaker"], u["text"]) for u in window]
    if uses_llm(context):
        memory, schema = _memory(context), schema_for(context.schema_path)
        found, cost = llm_candidates(
            context, memory, state["dialogue_id"], utterance, recent, schema
        )
        return {"candidates": found, "turn_ms": _now_ms() - started, "turn_cost": cost}
    extractor = goal_extractor(context.goal_extraction_judge, context.schema_path)
    candidates = [
        {
            "description": c.description,
            "service": c.service,
            "intent": c.intent,
            "slots": dict(c.slots),
            "confidence": c.confidence,
            "evidence": c.evidence,
        }
        for c in extractor.extract(utterance, recent)
    ]
    evidence = service_evidence(context.schema_path)
    if evidence is not None and candidates:
        said = said_so_far(state["history"], state["cursor"])
        for candidate in candidates:
            better = evidence.preferred(str(candidate["service"]), str(candidate["intent"]), said)
            candidate["service"] = better or candidate["service"]
    return {"candidates": candidates, "turn_ms": _now_ms() - started, "turn_cost": {}}


def check_existence_node(state: GoalTrackingState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Stage 1: top-k neighbours from D_vec, then the judge; match when confidence >= tau."""
    context = get_context(runtime)
    if uses_llm(context):
        return {}  # the turn-update call already answered the existence check
    started = _now_ms()
    memory = _memory(context)
    checked = []
    for candidate in state["candidates"]:
        if candidate["service"] and candidate["intent"]:
            # The exact key decides (see check_existence): D_sym has every goal with it, so a
            # top-k query of D_vec would only cost time.
            neighbours = [
                (goal, 1.0)
                for goal in memory.goals(state["dialogue_id"])
                if same_key(candidate["service"], candidate["intent"], goal)
            ]
        else:
            neighbours = memory.neighbours(
                state["dialogue_id"], candidate["description"], context.top_k
            )
        match = check_existence(candidate["service"], candidate["intent"], neighbours, context.tau)
        checked.append(
            candidate
            | {
                "memory_id": match.goal_id,
                "match_confidence": match.confidence,
                "match": match.reason,
            }
        )
    return {"candidates": checked, "turn_ms": state["turn_ms"] + _now_ms() - started}


def update_memory(state: GoalTrackingState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Stages 2-3: update matched goals, insert and link new ones, apply the status cue."""
    context = get_context(runtime)
    started = _now_ms()
    memory, dialogue_id = _memory(context), state["dialogue_id"]
    current = state["history"][state["cursor"]]
    turn, judge = current["turn"], context.goal_extraction_judge
    schema = schema_for(context.schema_path)
    named: list[str] = []
    cost = dict(state.get("turn_cost") or {})
    llm = uses_llm(context)
    # What memory held for each retrieved goal before this utterance (memory recall, §6.2).
    held = {
        c["memory_id"]: found.to_dict()
        for c in state["candidates"]
        if c["memory_id"] is not None
        and (found := memory.get(dialogue_id, c["memory_id"])) is not None
    }
    for candidate in state["candidates"]:
        if candidate["memory_id"] is not None:
            goal_id, slots = candidate["memory_id"], candidate["slots"]
            goal = memory.update_slots(dialogue_id, goal_id, slots, turn=turn)
            if "status" in candidate:  # the LLM judged the matched goal's status
                memory.transition(
                    dialogue_id, goal.id, candidate["status"], turn=turn, proposed_by=judge
                )
            elif goal.status == "abandoned":  # the user comes back to a goal they had left
                memory.transition(dialogue_id, goal.id, "open", turn=turn, proposed_by=judge)
        else:
            goal = memory.insert(
                dialogue_id,
                candidate["description"],
                turn=turn,
                domain=candidate["service"],
                intent=candidate["intent"],
                slots=candidate["slots"],
                status=candidate.get("status", "open"),
                parent_id=parent_for(memory, dialogue_id, candidate["service"]),
            )
            if llm:
                links, link_cost = llm_links(context, memory, goal)
                cost = add_cost(cost, link_cost)
                for other_id, relation, depends_on in links:
                    if depends_on:
                        memory.add_dependency(dialogue_id, goal.id, other_id, relation=relation)
            else:
                evolve_links(memory, goal, context, schema)
        named.append(goal.id)
    if not llm:
        rename_by_evidence(memory, dialogue_id, context, state["history"], state["cursor"], turn)
        apply_status_cue(memory, dialogue_id, current, named, context, schema, state["history"])
    cursor = state["cursor"] + 1
    goals = memory.snapshot(dialogue_id)
    elapsed = state["turn_ms"] + _now_ms() - started
    return {
        "cursor": cursor,
        "goals": goals,
        "turns": [*state.get("turns", []), {"turn": turn, "goal_states": _states(goals)}],
        "costs": [
            *state.get("costs", []),
            {"turn": turn, "latency_ms": round(elapsed, 3), **add_cost(cost, {})},
        ],
        "queries": [
            *state.get("queries", []),
            *({"turn": turn, "description": c["description"], "retrieved": c["memory_id"],
               "confidence": c["match_confidence"], "held": _held(held.get(c["memory_id"]))}
              for c in state["candidates"]),
        ],
    }  # fmt: skip


def route_after_update(
    state: Mapping[str, Any], runtime: Runtime[Context]
) -> Literal["proactive_audit", "extract_goals", "__end__"]:
    """Audit every K utterances; otherwise go on or finish."""
    every = get_context(runtime).audit_every
    if every > 0 and state["cursor"] % every == 0:
        return "proactive_audit"
    return route_next(state)


def proactive_audit(state: GoalTrackingState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Stage 4: at the end, answered searches and affirmed transactions are completed."""
    closing = bool(state.get("final")) and state["cursor"] >= len(state["history"])
    context = get_context(runtime)
    if uses_llm(context):
        return _llm_audit(state, context, closing)
    if not closing:
        return {}  # the local audit has nothing to add mid-dialogue (status cues are per turn)
    memory, dialogue_id = _memory(context), state["dialogue_id"]
    turn = len(state["history"])
    schema = schema_for(context.schema_path)
    history = state["history"]

    def is_lookup(goal: Goal) -> bool:
        return bool(goal.intent) and not is_transactional(goal.domain, goal.intent, schema)

    audit = final_audit(
        memory.goals(dialogue_id),
        is_lookup=is_lookup,
        answered=lambda goal: answered(goal, history),
        affirmed=lambda goal: affirmed(goal, history),
    )
    for goal_id, status, _evidence in audit:
        memory.transition(dialogue_id, goal_id, status, turn=turn, proposed_by="audit:local")
    goals = memory.snapshot(dialogue_id)
    turns = list(state.get("turns", []))
    if turns:
        turns[-1] = {"turn": turns[-1]["turn"], "goal_states": _states(goals)}
    return {"goals": goals, "turns": turns, "audited_final": True}


def _llm_audit(state: GoalTrackingState, context: Context, closing: bool) -> dict[str, Any]:
    """The LLM audit: apply its updates; its cost joins the last utterance's record."""
    memory, dialogue_id = _memory(context), state["dialogue_id"]
    turn = state["cursor"]
    updates, cost = llm_audit(context, memory, dialogue_id, state["history"][:turn])
    for goal_id, status, _evidence in updates:
        memory.transition(dialogue_id, goal_id, status, turn=turn, proposed_by="audit:llm")
    goals = memory.snapshot(dialogue_id)
    turns, costs = list(state.get("turns", [])), list(state.get("costs", []))
    if turns:
        turns[-1] = {"turn": turns[-1]["turn"], "goal_states": _states(goals)}
    if costs:
        costs[-1] = costs[-1] | add_cost(costs[-1], cost)
    return {"goals": goals, "turns": turns, "costs": costs, "audited_final": closing}


def _held(goal: dict[str, Any] | None) -> dict[str, Any] | None:
    """A retrieved goal as memory held it: status, its history and slot values."""
    if goal is None:
        return None
    return {
        "status": goal["status"],
        "history": [entry["status"] for entry in goal["status_history"]],
        "slots": goal["slots"],
    }


def _states(goals: list[dict[str, Any]]) -> dict[str, str]:
    return {goal["id"]: goal["status"] for goal in goals}
