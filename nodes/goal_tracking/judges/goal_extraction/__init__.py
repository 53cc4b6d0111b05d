r"""The goal-extraction judge role: ATOD's stage ``(u_t, c_t) -> G_t`` (paper 000, Section 5.2).

Given one utterance and the few before it, return the user goals it raises or refers to, as
:class:`CandidateGoal`\\ s for the goal tracker's existence check.

* **With a schema** (SGD ``schema.json`` form) a goal is named ``(service, intent)``. A small MLP
  (:mod:`nodes.judges.classifier`) scores every intent of the schema from relational MiniLM features
  (:mod:`nodes.goal_tracking.judges.goal_extraction.features`): cosines of the utterance, the
  system's previous utterance and the user's earlier ones to the intent, service and slot
  descriptions, ranks and margins among the intents, and cue flags. Because no feature names a
  service, it works zero-shot on services absent from its training data (SGD train);
  ``scripts/train_goal_extractor.py`` trains it. Categorical slot values the user states are filled
  in; nothing else (the SGD frames are never read).
* **Without a schema** a user request ("I need a hotel in Chicago") becomes a goal whose
  ``description`` is the request clause, normalised, and ``service``/``intent`` are empty;
  acknowledgements, answers to the system's questions and small talk yield nothing.

Only user utterances raise goals (as in SGD, where goals are the user's): a system utterance
yields ``[]``; it still matters as context (an offer the user accepts starts a booking).
"""

from __future__ import annotations

import functools

from todeval.evals.datasets.sgd_schema import load_sgd_schema
from todeval.nodes.goal_tracking.judges.goal_extraction.local import LocalGoalExtractor
from todeval.nodes.goal_tracking.judges.goal_extraction.role import ROLE, GoalExtractor
from todeval.nodes.judges.spec import JudgeSpecError, parse_spec


@functools.lru_cache(maxsize=8)
def goal_extractor(spec: str = "local", schema_path: str | None = None) -> GoalExtractor:
    """The goal extractor for ``spec``, built once per (spec, schema).

    Args:
        spec: ``"local"`` (an LLM extractor comes with the batched turn prompt).
        schema_path: An SGD ``schema.json``; None for schema-free extraction.

    Raises:
        JudgeSpecError: The spec is malformed or not ``local``.
    """
    parsed = parse_spec(spec)
    if not parsed.is_local or parsed.variant not in (None, "default", "learned"):
        raise JudgeSpecError(f"{ROLE}: only the local extractor exists for now, not {spec!r}")
    schema = load_sgd_schema(schema_path) if schema_path else None
    return LocalGoalExtractor(schema)


__all__ = ["goal_extractor"]
