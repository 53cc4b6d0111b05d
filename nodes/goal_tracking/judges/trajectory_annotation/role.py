"""The trajectory-annotation role: a sampled goal set made a trajectory (paper 000, §4.2, A.4).

Input: the sampled goals (``(service, intent)`` in walk order) and the complexity stratum.
Output, an *annotation* (a JSON object, kept in the synthesis graph's state):

* ``complexity_class``: the stratum (the quality check later verifies Table 9 on the dialogue);
* ``goals``: Listing 1's goal entries (``id``, ``domain``, ``intent``, ``slots``,
  ``slot_values``, ``dependencies``, ``content``, ``core_content``, ``classification_method``,
  ``dependency_label``, ``defectiveness_label``) plus ``parent_id`` for a sub-goal (a later goal
  of the same service, e.g. the reservation after the restaurant search);
* ``metadata``: Listing 1's (``num_goals``, ``estimated_turns``, ``async_execution``,
  ``interleaving``, ``proactivity``) plus ``defects``, ``value_flows`` (values a goal takes from
  another) and ``domains``;
* ``plan`` (local annotator only): what the local generator composes, per service task: the
  SGD episode, the goal ids it realises, its value flows, whether its result is deferred, and
  which proactive suggestion precedes it.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, Protocol

from todeval.nodes.goal_tracking.synthesis.library import EpisodeLibrary, Goal
from todeval.nodes.judges.result import JudgeResult

ROLE = "trajectory_annotation"

Annotation = dict[str, Any]


class TrajectoryAnnotator(Protocol):
    """Anything that annotates a sampled goal set."""

    name: str

    def annotate(
        self,
        goals: Sequence[Goal],
        complexity: str,
        library: EpisodeLibrary,
        rng: random.Random,
    ) -> JudgeResult[Annotation]:
        """The annotation, or None with the reason it cannot be made for these goals."""
        ...
