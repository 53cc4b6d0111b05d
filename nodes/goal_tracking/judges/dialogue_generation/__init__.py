"""The dialogue-generation role (paper 000, §4.3).

* ``local`` - :class:`~.local.LocalDialogueGenerator`: real SGD utterances composed as the local
  annotator planned, values made consistent, tool results deferred.
* ``<provider>:<model>`` - :class:`~.llm.LLMDialogueGenerator`: the generation prompt.
"""

from __future__ import annotations

import functools

import todeval.nodes.goal_tracking.judges.dialogue_generation.local  # noqa: F401  (registers it)
from todeval.nodes.goal_tracking.judges.dialogue_generation.llm import LLMDialogueGenerator
from todeval.nodes.goal_tracking.judges.dialogue_generation.role import (
    ROLE,
    DialogueGenerator,
    Draft,
)
from todeval.nodes.judges import resolve_judge


@functools.lru_cache(maxsize=8)
def dialogue_generator(spec: str = "local", max_retries: int = 3) -> DialogueGenerator:
    """The generator for ``spec`` (built once; raises on unknown specs)."""
    generator: DialogueGenerator = resolve_judge(
        ROLE, spec, lambda parsed: LLMDialogueGenerator(parsed, max_retries=max_retries)
    )
    return generator


__all__ = ["ROLE", "DialogueGenerator", "Draft", "dialogue_generator"]
