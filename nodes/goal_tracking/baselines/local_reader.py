"""The local reader of the memory baselines: ATOD's local pipeline replayed over a memory view.

With a local spec, a baseline's answer ("every goal and its status") is what the local goal
extractor and status cues read from the utterances the method recalled, replayed from an empty
goal memory (or, for LLM-Rsum, from the method's last answer): the same reader as the ATOD
tracker, so the baselines differ only in what they remember. It runs the tracker's own node
functions (extract, existence check, update) on a throwaway dialogue of the in-process memory.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from langgraph.runtime import Runtime

from nodes.context import Context
from nodes.goal_tracking.tracker import (
    append_utterances,
    check_existence_node,
    extract_goals,
    goal_memory,
    update_memory,
)

_COUNTER = itertools.count()


def read_goals(
    utterances: Sequence[Mapping[str, Any]],
    context: Context,
    start: Sequence[Mapping[str, Any]] = (),
) -> list[dict[str, Any]]:
    """The goals the local pipeline reads from ``utterances``, starting from ``start``.

    Args:
        utterances: ``{"speaker", "text"}`` in dialogue order.
        context: The run's context (the extractor spec, schema, tau, delta...).
        start: Goals to start from (goal-memory snapshot dicts), e.g. a summary's goals.

    Returns:
        The goal-memory snapshot after the last utterance.
    """
    local = replace(context, goal_memory_path=":memory:", vector_backend="memory")
    runtime: Runtime[Context] = Runtime(context=local)
    memory = goal_memory(":memory:", "memory")
    dialogue_id = f"baseline-reader:{next(_COUNTER)}"
    memory.restore(dialogue_id, list(start))
    state: dict[str, Any] = {
        "dialogue_id": dialogue_id,
        "utterances": [{"speaker": u["speaker"], "text": u["text"]} for u in utterances],
        "goals": list(start),
    }
    try:
        state |= append_utterances(state)  # type: ignore[arg-type]
        while state["cursor"] < len(state["history"]):
            state |= extract_goals(state, runtime)  # type: ignore[arg-type]
            state |= check_existence_node(state, runtime)  # type: ignore[arg-type]
            state |= update_memory(state, runtime)  # type: ignore[arg-type]
        return memory.snapshot(dialogue_id)
    finally:
        memory.clear(dialogue_id)
