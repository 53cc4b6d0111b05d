"""Intent capture of memory-guided dialogue planning (paper 001, §4.2).

MAP §4.2 first turns the new session's context ``c_i`` into a high-level intent description
``k_i``, the query that retrieves stored sessions. The ``intent_capture`` role:

* ``local``: the given intent in words plus the values the context states, worded like a stored
  session's description (:func:`~nodes.memory.judges.bank_builder.intent_description`), so ``k_i``
  and the bank's ``k_j`` compare like with like. A value counts as stated when it is one the user's
  earlier sessions of the intent hold (:func:`session_values`, or a categorical value of the schema)
  and the context mentions it (:func:`stated_slot_values`).
* ``<provider>:<model>``: :data:`INTENT_CAPTURE_PROMPT`.

Every result records the judge spec; a judge that cannot answer returns ``None`` with a reason.
:mod:`nodes.memory.judges.planning` re-exports this module's public names.
"""

from __future__ import annotations

import functools

from todeval.evals.datasets.sgd_schema import load_sgd_schema
from todeval.nodes.judges.spec import JudgeSpecError, parse_spec
from todeval.nodes.memory.judges.intent_capture.llm import LLMIntentCapture
from todeval.nodes.memory.judges.intent_capture.local import LocalIntentCapture
from todeval.nodes.memory.judges.intent_capture.role import INTENT_ROLE, IntentCapturer


@functools.lru_cache(maxsize=8)
def intent_capturer(spec: str = "local", schema_path: str | None = None) -> IntentCapturer:
    """The intent capture judge for ``spec``, built once per (spec, schema).

    Args:
        spec: ``"local"`` or an LLM spec.
        schema_path: An SGD ``schema.json`` whose categorical values the local judge also
            looks for.

    Raises:
        JudgeSpecError: The spec is malformed or an unknown local variant.
    """
    parsed = parse_spec(spec)
    if not parsed.is_local:
        return LLMIntentCapture(parsed)
    if parsed.variant not in (None, "default"):
        raise JudgeSpecError(f"{INTENT_ROLE}: no local variant {parsed.variant!r}")
    return LocalIntentCapture(load_sgd_schema(schema_path) if schema_path else None)


__all__ = ["intent_capturer"]
