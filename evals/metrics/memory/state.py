"""Joint goal accuracy from the predicted dialogue state (MAP / MS-TOD, paper 001, §5.1).

Paper 001 says "JGA measures slot prediction accuracy" and sets MAP's JGA beside dialogue state
trackers' (BERT-DST, LDST: Table 4; SGD and MultiWOZ: Table 7), so it is the DST figure: a
*predicted dialogue state* against the gold one. Here:

- **Gold state**: the item's task goal (the slot values the reference confirmation states).
- **Predicted state** (``dialogue_state``, written by the memory graph): slot -> value the system
  commits to when it confirms, over the intent's task attributes. The local reader reports the
  state it filled its confirmation from; for a free-text response (an LLM reader) the state is
  read off the response: per slot, the one candidate value it states among those the system
  had (values the context states, the user's stored values for the intent, schema defaults); a
  slot with two stated candidates is ambiguous and predicts nothing.
- **JGA** (``jga``): per item, 1 when the predicted state equals the gold state, i.e. every
  gold slot is predicted with an equivalent value (:func:`values_match`) and no other slot is
  predicted (the usual DST exact match: a default nobody asked for is a wrong slot); the mean
  over items. **State slot accuracy** (``state_slot_accuracy``): the share of gold slots the
  predicted state gets right; ``state_extra_slots``: predicted slots the gold state lacks.

The earlier figure, 1 when the response *mentions* every gold value
(:func:`~evals.metrics.memory.scores.joint_goal_accuracy`), is kept as ``jga_mention``; it can
never exceed slot accuracy, which reads the response the same way.
"""

from __future__ import annotations

from collections.abc import Mapping

from todeval.evals.metrics.memory.slot_mention import normalise, slot_value_mentioned

_FLAGS = frozenset({"true", "false", "none"})


def values_match(predicted: str, gold: str, slot: str) -> bool:
    """The predicted value is the gold one: the same words, or each states the other.

    Flags compare as written (``True``/``False``); "7 pm" matches "19:00" and "2" matches
    "two", but "Sipan" does not match "Sipan Peruvian Restaurant & Bar".
    """
    if predicted.strip().lower() in _FLAGS or gold.strip().lower() in _FLAGS:
        return predicted.strip().lower() == gold.strip().lower()
    if normalise(predicted) == normalise(gold):
        return True
    return slot_value_mentioned(gold, predicted, slot=slot) and slot_value_mentioned(
        predicted, gold, slot=slot
    )


def state_scores(
    predicted: Mapping[str, str] | None, gold: Mapping[str, str]
) -> dict[str, float | None]:
    """One item's ``jga``, ``state_slot_accuracy`` and ``state_extra_slots``.

    Args:
        predicted: The predicted dialogue state (None: no state, e.g. no response).
        gold: The gold task goal.

    Returns:
        The three figures; all None for an empty goal or a missing state.
    """
    if not gold or predicted is None:
        return {"jga": None, "state_slot_accuracy": None, "state_extra_slots": None}
    right = [s for s, v in gold.items() if s in predicted and values_match(predicted[s], v, s)]
    extra = [s for s in predicted if s not in gold]
    return {
        "jga": float(len(right) == len(gold) and not extra),
        "state_slot_accuracy": len(right) / len(gold),
        "state_extra_slots": float(len(extra)),
    }
