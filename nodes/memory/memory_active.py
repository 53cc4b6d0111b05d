"""Nodes of the memory-active graph: MAP's memory-guided dialogue planning (paper 001, §4.2-4.3).

``capture_intent`` -> ``activate_memory`` -> ``query_missing_slots`` -> ``judge_memory``
(score each activated unit, re-rank ``s_final = alpha * s_retrieval + (1 - alpha) * s_judger``)
-> ``refine_memory`` (the top ``memory_selected`` units, questions dropped) -> ``write_response``
(the reader's confirmation). The memory bank is a :class:`stores.memory_bank.MemoryBank` named
by the context (path, backend, collection); the graph reads it and never writes it.

``Context.memory_setting`` swaps MAP's memory for the paper's comparison settings
(:mod:`nodes.memory.settings`): which memory activation searches and what the reader gets.
``Context.memory_activation`` picks what activation ranks: the sessions' intent keys
(``intent_key``, the paper's) or each QA unit (``qa``).

The gold task goal, when the input has one, is read only by the GPT-4 scorer and the repair
step that follow in the graph: no planning node and not the reader ever see it.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from langgraph.runtime import Runtime

from todeval.evals.datasets.sgd_schema import load_sgd_schema
from todeval.evals.memory_schema import MemoryUnit, MsTodTurn, ScoredUnit
from todeval.nodes.context import Context, get_context
from todeval.nodes.memory.bank import bank_for, store_for
from todeval.nodes.memory.baselines import baseline_memory
from todeval.nodes.memory.dialogue_state import predicted_state
from todeval.nodes.memory.documents import missing_memory_reason
from todeval.nodes.memory.judges.intent_capture import CaptureRequest
from todeval.nodes.memory.judges.missing_slot_query import SlotQueryRequest
from todeval.nodes.memory.judges.planning import attribute_defaults, task_attributes
from todeval.nodes.memory.judges.reader import ReaderRequest
from todeval.nodes.memory.judges.units import anchor_session, render_context, select_units
from todeval.nodes.memory.roles import INTENT_CAPTURE, MISSING_SLOT_QUERY, READER, memory_judger
from todeval.nodes.memory.settings import ACTIVATIONS, MemorySetting, MemorySettings, memory_setting
from todeval.nodes.memory.state import MemoryState
from todeval.stores.memory_bank import RETRIEVAL_MODES, RetrievalMode


@functools.lru_cache(maxsize=8)
def _schema(path: str | None) -> Mapping[str, Any] | None:
    return load_sgd_schema(path) if path else None


def _turns(state: MemoryState) -> list[MsTodTurn]:
    return [MsTodTurn.model_validate(turn) for turn in state["context"]]


def _intent_units(context: Context, state: MemoryState) -> list[MemoryUnit]:
    units = bank_for(context).units(state["individual_id"])
    return [unit for unit in units if unit.intent == state["intent"]]


def _known_slots(context: Context, state: MemoryState) -> list[str]:
    return [unit.slot for unit in _intent_units(context, state) if unit.slot]


def _attributes(context: Context, state: MemoryState) -> list[str]:
    """The intent's task attributes.

    The stored units' slots pick the schema's service (Hotels_1 or Hotels_4?) or, without a
    schema, are the attributes themselves (most used first).
    """
    return task_attributes(
        state["intent"],
        schema=_schema(context.schema_path),
        service=state.get("service"),
        known_slots=_known_slots(context, state),
    )


def _setting(context: Context) -> MemorySetting:
    return memory_setting(MemorySettings.of(context).setting)


def capture_intent(state: MemoryState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Intent capture: the session's intent description k_i and the values the context states.

    Memory's values help read names off the context only where the setting has QA memory.
    """
    context = get_context(runtime)
    capturer = INTENT_CAPTURE.judge(context.spec("intent_capture"), context.llm.max_retries)
    known = []
    if _setting(context).source == "qa":
        known = [(u.slot, u.value) for u in _intent_units(context, state) if u.slot and u.value]
    captured = capturer.capture(
        CaptureRequest(
            _turns(state),
            state["intent"],
            known_values=known,
            service=state.get("service"),
            attributes=_attributes(context, state),
            schema=_schema(context.schema_path),
        )
    )
    return {
        "intent_description": captured.intent_description,
        "stated_values": dict(captured.stated_values),
        "judges": {"memory_planner": captured.judge},
        "reasons": [f"intent capture: {captured.reason}"] if captured.reason else [],
    }


def activate_memory(state: MemoryState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Memory activation: the user's top-k units for k_i (the context when k_i is missing).

    QA memory under ``intent_key`` activation ranks the sessions' intent keys and activates
    their units; otherwise every unit (a QA pair, or a whole dialogue or summary) is ranked on
    its own. Whole dialogues and summaries are ranked against the context itself, as retrieval
    of historical dialogues is (Table 1): k_i is MAP's planning step, not the baselines'.
    Settings that rank nothing activate None.
    """
    context = get_context(runtime)
    setting = _setting(context)
    mode = MemorySettings.of(context).retrieval
    if mode not in RETRIEVAL_MODES:
        raise ValueError(f"memory_retrieval must be one of {RETRIEVAL_MODES}, not {mode!r}")
    activation = MemorySettings.of(context).activation
    if activation not in ACTIVATIONS:
        raise ValueError(f"memory_activation must be one of {ACTIVATIONS}, not {activation!r}")
    store = store_for(context, setting.source)
    if not setting.ranks or store is None:
        return {"activated": None}
    query = state.get("intent_description") or render_context(_turns(state))
    if setting.text_memory:  # Table 1's retrieval of past dialogues: the context is the query
        query = render_context(_turns(state))
    retrieval: RetrievalMode = mode
    if setting.source == "qa" and MemorySettings.of(context).activation == "intent_key":
        search = store.search_by_intent
    else:
        search = store.search
    hits = search(state["individual_id"], query, MemorySettings.of(context).top_k, retrieval)
    activated = [
        ScoredUnit(unit=unit, retrieval_score=score, final_score=score).model_dump()
        for unit, score in hits
    ]
    return {"activated": activated}


def query_missing_slots(state: MemoryState, runtime: Runtime[Context]) -> dict[str, Any]:
    """The missing-slot query q_miss: the intent's task attributes the context leaves open."""
    context = get_context(runtime)
    attributes = _attributes(context, state)
    querier = MISSING_SLOT_QUERY.judge(context.spec("missing_slot_query"), context.llm.max_retries)
    stated = state.get("stated_values") or {}
    missing = querier.query(SlotQueryRequest(_turns(state), state["intent"], attributes, stated))
    reasons = [f"missing-slot query: {missing.reason}"] if missing.reason else []
    return {
        "missing_slots": missing.missing_slots,
        "missing_query": missing.query,
        "reasons": [*state.get("reasons", []), *reasons],
    }


def judge_memory(state: MemoryState, runtime: Runtime[Context]) -> dict[str, Any]:
    """The memory judger scores each activated unit; re-rank by s_final (Eq. 4)."""
    context = get_context(runtime)
    if _setting(context).selection != "map":
        return {"judges": {**state.get("judges", {}), "memory_judger": "none"}}
    scored = [ScoredUnit.model_validate(row) for row in state.get("activated") or []]
    judger = memory_judger(context.spec("memory_judger"), context.llm.max_retries)
    judges = {**state.get("judges", {}), "memory_judger": getattr(judger, "name", "none")}
    if judger is None or not scored:
        return {"judges": judges}
    scores = judger.score(
        render_context(_turns(state)),
        state.get("missing_query") or "",
        [row.unit for row in scored],
    )
    reranked = [
        rerank(row, score, MemorySettings.of(context).alpha)
        for row, score in zip(scored, scores, strict=True)
    ]
    reranked.sort(key=lambda row: -row.final_score)  # stable: retrieval order breaks ties
    return {"activated": [row.model_dump() for row in reranked], "judges": judges}


def rerank(row: ScoredUnit, judger_score: float | None, alpha: float) -> ScoredUnit:
    """``s_final = alpha * s_retrieval + (1 - alpha) * s_judger``; s_retrieval alone if unjudged."""
    if judger_score is None:
        return row.model_copy(update={"judger_score": None, "final_score": row.retrieval_score})
    final = alpha * row.retrieval_score + (1.0 - alpha) * judger_score
    return row.model_copy(update={"judger_score": judger_score, "final_score": final})


def refine_memory(state: MemoryState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Keep the top units; with refinement only their core answers, else question and answer.

    Which units: the top ``memory_selected`` of the re-ranked activated units
    (:func:`~nodes.memory.judges.units.select_units`: one per slot of the item's intent, none
    for a slot the context states, units of missing slots and of the session the context points
    at first). That session's whole QA set counts as activated (MAP activates a session's units
    ``v_j`` through its intent key ``k_j``), so its units outside the top-k can still be kept.
    Departure from §4.2, which keeps the plain top 5 by ``s_final``: a second value for a slot
    or a value the context already gives tells the reader nothing, and the local reader
    cannot weigh a QA pair against the dialogue as the paper's LLM judger does.
    """
    context = get_context(runtime)
    setting = _setting(context)
    if setting.selection != "map":
        return baseline_memory(state, context, setting)
    ranked = [ScoredUnit.model_validate(row).unit for row in state.get("activated") or []]
    stated = state.get("stated_values") or {}
    anchor = anchor_session(ranked, stated)
    seen = {unit.unit_id for unit in ranked}
    rest = [
        unit
        for unit in bank_for(context).units(state["individual_id"])
        if unit.session_id == anchor and unit.unit_id not in seen
    ]
    selected = select_units(
        [*ranked, *rest],
        MemorySettings.of(context).selected,
        stated=stated,
        missing=state.get("missing_slots"),
        anchor=anchor,
        intent=state["intent"],
    )
    if MemorySettings.of(context).refine:
        refined = [unit.answer for unit in selected]
    else:
        refined = [f"Question: {unit.question} Answer: {unit.answer}" for unit in selected]
    return {"selected": [unit.unit_id for unit in selected], "refined": refined}


def write_response(state: MemoryState, runtime: Runtime[Context]) -> dict[str, Any]:
    """The reader writes the confirmation from the context and the refined memory (Fig. 9).

    Also the predicted dialogue state the confirmation commits to (JGA's,
    :func:`~nodes.memory.dialogue_state.predicted_state`).
    """
    context = get_context(runtime)
    setting = _setting(context)
    store = store_for(context, setting.source)
    if setting.text_memory and store is not None and not store.count(state["individual_id"]):
        reason = missing_memory_reason(setting.source, context.spec("memory_summarizer"))
        return {
            "response": None,
            "response_slots": None,
            "dialogue_state": None,
            "state_source": "none",
            "ambiguous_slots": [],
            "judges": {**state.get("judges", {}), "reader": context.spec("reader")},
            "reasons": [*state.get("reasons", []), f"reader: {reason}"],
        }
    reader = READER.judge(context.spec("reader"), context.llm.max_retries)
    schema = _schema(context.schema_path)
    defaults = (
        attribute_defaults(
            state["intent"],
            schema,
            service=state.get("service"),
            known_slots=_known_slots(context, state),
        )
        if schema is not None and MemorySettings.of(context).schema_defaults
        else None
    )
    stated = state.get("stated_values") or {}
    result = reader.respond(
        ReaderRequest(
            _turns(state),
            state["intent"],
            list(state.get("refined", [])),
            task_goal_hint=stated or None,
            defaults=defaults,
            text_memory=setting.text_memory,
        )
    )
    candidates = [
        *stated.items(),
        *((u.slot, u.value) for u in _intent_units(context, state) if u.slot and u.value),
        *(defaults or {}).items(),
    ]
    dialogue_state, source, ambiguous = predicted_state(
        result.slots, result.response, candidates, _attributes(context, state)
    )
    reasons = [f"reader: {result.reason}"] if result.reason else []
    return {
        "response": result.response,
        "response_slots": result.slots,
        "dialogue_state": dialogue_state,
        "state_source": source,
        "ambiguous_slots": ambiguous,
        "judges": {**state.get("judges", {}), "reader": result.judge},
        "reasons": [*state.get("reasons", []), *reasons],
    }
