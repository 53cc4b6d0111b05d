"""The dialogue-generation role: an annotated trajectory made a dialogue (paper 000, §4.3, A.6).

Output, a *draft* (a JSON object in the synthesis graph's state):

* ``turns``: ``[{"speaker": "USER"|"SYSTEM", "utterance": ...}]``; a generator that knows the
  status changes it wrote (the local one) adds ``changes``: ``[[goal_id, new_status], ...]``;
* ``proactive_actions``: system-initiated actions it placed, ``{"turn_id", "goal_id", "kind",
  "appropriate"}`` (``kind``: ``suggestion`` or ``async_update``; ``appropriate`` False for an
  unhelpful one), when the generator knows them;
* ``labelled``: whether ``changes`` are there.
"""

from __future__ import annotations

import random
from typing import Any, Protocol

from todeval.nodes.goal_tracking.synthesis.library import EpisodeLibrary
from todeval.nodes.judges.result import JudgeResult

ROLE = "dialogue_generation"

Draft = dict[str, Any]


class DialogueGenerator(Protocol):
    """Anything that writes the dialogue of an annotation."""

    name: str

    def generate(
        self, annotation: dict[str, Any], library: EpisodeLibrary, rng: random.Random
    ) -> JudgeResult[Draft]:
        """The draft, or None with the reason."""
        ...
