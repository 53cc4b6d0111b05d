"""The local reader of the memory baselines: ATOD's local pipeline replayed over a memory view.

With a local spec, a baseline's answer ("every goal and its status") is what the local goal
extractor and status cues read from the utterances the method recalled, replayed from an empty
goal memory (or, for LLM-Rsum, from the method's last answer): the same reader as the ATOD
tracker, so the baselines differ only in what they remember. It runs the tracker's own stages
(:func:`~nodes.goal_tracking.tracker.track_utterance`: extract, existence check, update) on a
throwaway dialogue of the in-process memory.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from todeval.nodes.context import Context
from todeval.nodes.goal_tracking.tracker import (
    Tracking,
    goal_memory,
    track_utterance,
    with_utterances,
)

_COUNTER = itertools.count()


def read_goals(
    utterances: Sequence[Mapping[str, Any]],
    context: Context,
    start: Sequence[Mapping[str, Any]] = (),
) -> list[dict[str, Any]]:
    """The goal-memory snapshot the local pipeline reads from ``utterances``, from ``start`` on."""
    local = context.updated(
        settings={"goal_tracking": {"goal_memory_path": ":memory:", "vector_backend": "memory"}}
    )
    memory = goal_memory(":memory:", "memory")
    dialogue_id = f"baseline-reader:{next(_COUNTER)}"
    memory.restore(dialogue_id, list(start))
    history = with_utterances([], utterances)
    tracking = Tracking(dialogue_id, history, final=False, cursor=0, goals=[dict(g) for g in start])
    try:
        while tracking.cursor < len(tracking.history):
            track_utterance(tracking, local)
        return memory.snapshot(dialogue_id)
    finally:
        memory.clear(dialogue_id)
