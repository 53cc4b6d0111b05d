"""What a comparison setting gives the reader instead of MAP's refined memory (paper 001).

See :mod:`nodes.memory.settings` for the settings and the paper's names for them.
"""

from __future__ import annotations

from typing import Any

from todeval.evals.memory_schema import ScoredUnit
from todeval.nodes.context import Context
from todeval.nodes.memory.bank import store_for
from todeval.nodes.memory.settings import MemorySetting, MemorySettings
from todeval.nodes.memory.state import MemoryState


def baseline_memory(state: MemoryState, context: Context, setting: MemorySetting) -> dict[str, Any]:
    """What a comparison setting gives the reader (:mod:`nodes.memory.settings`).

    ``ranked``: the ``memory_selected`` best activated units, QA pairs unrefined (the paper's
    Hybrid RAG has no refinement); ``all``: every stored session; ``oracle``: the relevant
    sessions' (QA answers refined when ``refine_memory`` is on, as MAP's memory would be).
    """
    store = store_for(context, setting.source)
    if store is None:
        return {"selected": [], "refined": []}
    if setting.selection == "ranked":
        activated = state.get("activated") or []
        chosen = [ScoredUnit.model_validate(row).unit for row in activated]
        chosen = chosen[: MemorySettings.of(context).selected]
    else:
        chosen = store.units(state["individual_id"])
        if setting.selection == "oracle":
            relevant = set(state.get("relevant_session_ids") or [])
            chosen = [unit for unit in chosen if unit.session_id in relevant]
    if setting.text_memory:
        texts = [unit.answer for unit in chosen]
    elif setting.selection == "oracle" and MemorySettings.of(context).refine:
        texts = [unit.answer for unit in chosen]
    else:
        texts = [f"Question: {unit.question} Answer: {unit.answer}" for unit in chosen]
    return {"selected": [unit.unit_id for unit in chosen], "refined": texts}
