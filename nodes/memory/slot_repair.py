"""Nodes and routers of the proactive slot repair graph (MAP, paper 001, §4.3).

Each node returns a partial update and never mutates the state; ``turns`` is rebuilt rather than
appended with a reducer, so the graph can sit inside a parent that has its own ``turns``. A
judge that cannot judge stops the loop with a ``reason``; the result then leaves ``success``
and ``dte`` as None rather than blaming the agent.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from typing import Any, Literal

from langgraph.runtime import Runtime
from pydantic import TypeAdapter

from todeval.evals.memory_schema import MsTodTurn
from todeval.nodes.context import Context, get_context
from todeval.nodes.memory.judges.repair_agent import RepairRequest
from todeval.nodes.memory.judges.supervisor import RepairExchange
from todeval.nodes.memory.roles import REPAIR_AGENT, SUPERVISOR
from todeval.nodes.memory.settings import MemorySettings
from todeval.nodes.memory.state import SlotRepairState
from todeval.nodes.simulation.users.scenario import Persona, UserScenario
from todeval.nodes.simulation.users.simulator import UserSimulator

_GOAL = TypeAdapter(dict[str, str])
_TURNS = TypeAdapter(list[MsTodTurn])


def find_missing_slots(state: SlotRepairState, runtime: Runtime[Context]) -> dict[str, Any]:
    """L: the task-goal slots the confirmation omits or states wrongly (the supervisor's call)."""
    context = get_context(runtime)
    persona = Persona.from_mapping(state.get("persona"))  # a bad persona fails before any turn
    goal = _GOAL.validate_python(state["task_goal"])
    found = SUPERVISOR.judge(context.spec("supervisor"), context.llm.max_retries).missing_or_wrong(
        state["response"], goal, _TURNS.validate_python(state["context"])
    )
    reason = None if found.ok else f"the supervisor could not find L: {found.reason}"
    return {
        "initial_missing": found.value,
        "remaining": found.value,
        "turns": [],
        "repair_turns": 0,
        "judges": {
            "supervisor_judge": context.spec("supervisor"),
            "repair_agent": context.spec("repair_agent"),
            "user_simulator": context.spec("user_simulator"),
        },
        "user_persona": asdict(persona),
        "max_repair_turns": MemorySettings.of(context).max_repair_turns,
        "user_stopped": False,
        "reason": reason,
    }


def agent_turn(state: SlotRepairState, runtime: Runtime[Context]) -> dict[str, Any]:
    """The agent under test speaks, knowing L (slot names only) and the repair so far."""
    context = get_context(runtime)
    turns = state["turns"]
    last_user = turns[-1] if turns and turns[-1]["speaker"] == "user" else None
    request = RepairRequest(
        context=_TURNS.validate_python(state["context"]),
        response=state["response"],
        pending_slots=list(state["remaining"] or []),
        exchange=_exchange(turns),
        last_user_values=dict(last_user.get("revealed_slots", {})) if last_user else {},
        intent=state.get("intent"),
    )
    said = REPAIR_AGENT.judge(context.spec("repair_agent"), context.llm.max_retries).speak(request)
    if not said.utterance:
        return {"reason": f"the repair agent gave no turn: {said.reason}"}
    turn = {"speaker": "system", "utterance": said.utterance, "asked_slots": said.asked_slots}
    return {"turns": [*turns, turn], "repair_turns": state["repair_turns"] + 1}


def user_turn(state: SlotRepairState, runtime: Runtime[Context]) -> dict[str, Any]:
    """The simulated user, who knows the goal and L, answers the agent's turn."""
    context = get_context(runtime)
    turns = state["turns"]
    user = UserSimulator(
        UserScenario(task_goal=state["task_goal"], focus_slots=state["initial_missing"] or ()),
        persona=Persona.from_mapping(state.get("persona")),
        spec=context.spec("user_simulator"),
        max_retries=context.llm.max_retries,
    )
    response = [MsTodTurn(speaker="system", utterance=state["response"])]
    history = [
        *_TURNS.validate_python(state["context"]),
        *(response if state["response"].strip() else []),
        *_exchange(turns),
    ]
    said = user.reply(
        history,
        asked_slots=turns[-1].get("asked_slots", []),
        turn_index=sum(turn["speaker"] == "user" for turn in turns),
        open_slots=list(state["remaining"] or []),
    )
    if not said.ok:
        return {"reason": f"the user simulator gave no reply: {said.reason}"}
    turn = {
        "speaker": "user",
        "utterance": said.utterance,
        "revealed_slots": said.revealed_slots,
        "resolved_slots": [],
    }
    return {"turns": [*turns, turn], "user_stopped": said.stop}


def supervise(state: SlotRepairState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Remove from L each slot the latest exchange resolved (MAP Eq. 6)."""
    context = get_context(runtime)
    turns = state["turns"]
    pending = list(state["remaining"] or [])
    exchange = RepairExchange(
        state["task_goal"], pending, turns[-2]["utterance"], turns[-1]["utterance"]
    )
    supervisor = SUPERVISOR.judge(context.spec("supervisor"), context.llm.max_retries)
    verdict = supervisor.resolved(exchange)
    if verdict.value is None:
        return {"reason": f"the supervisor could not judge turn {len(turns)}: {verdict.reason}"}
    resolved = set(verdict.value)
    last = {**turns[-1], "resolved_slots": [s for s in pending if s in resolved]}
    return {
        "turns": [*turns[:-1], last],
        "remaining": [s for s in pending if s not in resolved],
    }


def score_repair(state: SlotRepairState) -> dict[str, Any]:
    """DTE (the confirmation is turn 1) and success (L empty); None when a judge failed."""
    judged = state.get("remaining") is not None and not _judge_failed(state)
    remaining = state.get("remaining")
    return {
        "dte": 1 + state["repair_turns"] if judged else None,
        "success": (not remaining) if judged else None,
        "reason": state.get("reason") or _stop_reason(state),
    }


def route_after_find_missing_slots(
    state: Mapping[str, Any],
) -> Literal["agent_turn", "score_repair"]:
    """Repair only when L is non-empty and the loop may take a turn."""
    if state.get("remaining") and state["max_repair_turns"] > 0:
        return "agent_turn"
    return "score_repair"


def route_after_agent_turn(state: Mapping[str, Any]) -> Literal["user_turn", "score_repair"]:
    """The user answers unless the agent failed to speak."""
    return "score_repair" if state.get("reason") else "user_turn"


def route_after_user_turn(state: Mapping[str, Any]) -> Literal["supervise", "score_repair"]:
    """The supervisor judges the exchange unless the simulator failed to reply."""
    return "score_repair" if state.get("reason") else "supervise"


def route_after_supervise(state: Mapping[str, Any]) -> Literal["agent_turn", "score_repair"]:
    """Loop while L is non-empty, turns remain and the user has not ended the dialogue."""
    if state.get("reason") or not state.get("remaining") or state.get("user_stopped"):
        return "score_repair"
    if state["repair_turns"] >= state["max_repair_turns"]:
        return "score_repair"
    return "agent_turn"


def _exchange(turns: list[Any]) -> list[MsTodTurn]:
    return [MsTodTurn(speaker=t["speaker"], utterance=t["utterance"]) for t in turns]


def _judge_failed(state: Mapping[str, Any]) -> bool:
    return bool(state.get("reason"))


def _stop_reason(state: Mapping[str, Any]) -> str | None:
    if not state.get("remaining"):
        return None
    if state.get("user_stopped"):
        return "the simulated user ended the dialogue with slots unresolved"
    return f"max_repair_turns ({state['max_repair_turns']}) reached with slots unresolved"
