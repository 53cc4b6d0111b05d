"""Nodes of the top-level evaluation graph: each runs one subsystem's graph on its view.

Every node gets the whole :class:`~evals.record_views.EvaluationRecord` (as JSON) and invokes a
subsystem graph inside itself, so the subsystem's state lives on this graph's checkpointer
(``get_state(config, subgraphs=True)`` shows it) and an interrupt inside it (a goal-success
escalation) pauses the whole evaluation thread. Each returns ``{"results": {suite: output}}``;
the parent merges them.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from evals.goal_tracking_schema import AtodDialogue
from evals.record_views import EvaluationRecord
from graphs.context import Context, get_context
from graphs.goal_shift import graph as goal_shift_graph
from graphs.goal_success import graph as goal_success_graph
from graphs.goal_tracker import graph as goal_tracker_graph
from graphs.memory_active import graph as memory_active_graph
from nodes.judges.memory_units import local_memory_units
from nodes.memory_active import bank_for


def _record(payload: dict[str, Any]) -> EvaluationRecord:
    return EvaluationRecord.model_validate(payload["record"])


def run_goal_success(payload: dict[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
    """Goal segmentation, teacher voting and GSR on the record's dialogue."""
    record = _record(payload)
    output = goal_success_graph.invoke(
        {"dialogue": record.dialogue.model_dump(mode="json")}, context=get_context(runtime)
    )
    return {"results": {"gsr": output}}


def run_goal_tracking(payload: dict[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
    """ATOD's goal tracker over the record's utterances, closing audit included."""
    record = _record(payload)
    output = goal_tracker_graph.invoke(
        {
            "dialogue_id": record.record_id,
            "utterances": tracker_utterances(record),
            "final": True,
        },
        context=get_context(runtime),
    )
    return {"results": {"goals": output}}


def tracker_utterances(record: EvaluationRecord) -> list[dict[str, str]]:
    """The utterances in order: the ATOD turns when there are, else user message, response."""
    atod: AtodDialogue | None = record.atod
    if atod is not None:
        return [{"speaker": t.speaker, "text": t.utterance} for t in atod.turns]
    return [
        {"speaker": speaker, "text": text}
        for turn in record.dialogue.turns
        for speaker, text in (("USER", turn.user_msg), ("SYSTEM", turn.response))
        if text
    ]


def run_goal_shift(payload: dict[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
    """TSR, TUE, TCRR and GSRT on the record's agent transcript."""
    record = _record(payload)
    assert record.conversation is not None  # the router sends only records that have one
    output = goal_shift_graph.invoke(
        {"conversation": record.conversation.model_dump(mode="json")},
        context=get_context(runtime),
    )
    return {"results": {"shift": output}}


def run_memory(payload: dict[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
    """The memory-active policy on the record's item, the user's sessions in their bank."""
    record = _record(payload)
    assert record.memory is not None  # the router sends only records that have one
    context = get_context(runtime)
    memory = record.memory
    bank = bank_for(context)
    if not bank.count(memory.individual_id):  # local units are deterministic: store once
        bank.add_units(
            unit
            for session in memory.sessions
            for unit in local_memory_units(memory.individual_id, session)
        )
    item = memory.item
    output = memory_active_graph.invoke(
        {
            "individual_id": memory.individual_id,
            "intent": item.intent,
            "context": [turn.model_dump() for turn in item.context],
            "task_goal": dict(item.task_goal),
        },
        context=context,
    )
    return {"results": {"memory": output}}
